package ui

// The call form and the questions: every question (approval dialogs, servers'
// requests for input, quit, accepting a changed definition) lives in the one
// overlay of package ui/question, with its input guard; the root acts on the
// outcome.

import (
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/dialog"
	"github.com/airlock-mcp/airlock/ui/form"
	"github.com/airlock-mcp/airlock/ui/question"
	"github.com/airlock-mcp/airlock/ui/screens/hazards"
	"github.com/airlock-mcp/airlock/ui/screens/queue"
)

// openForm opens the call form for a tool over the current screen, or in its place
// (replace: "call again" from a result). A blocked tool is never called, so its
// form does not open; the status says why.
func (m *Model) openForm(t model.ToolInfo, replace bool) (*Model, tea.Cmd) {
	if t.Class.Tier == trust.TierBlocked {
		why := "blocked tools are never called"
		if n := len(t.Class.Reasons); n > 0 {
			why = t.Class.Reasons[n-1]
		}
		m.status = "⊘ " + common.Inline(m.St, t.Ref.Qualified(), 40) + " is blocked: " + common.Inline(m.St, why, 120)
		return m, nil
	}
	if t.TaskSupport == common.TaskRequired {
		// The whole reason is in the detail and in Activity.
		m.status = "⧗ not called: " + common.Inline(m.St, t.Ref.Qualified(), 40) + " runs only as a task, which airlock cannot do yet (enter: why)"
		return m, nil
	}
	m.form = form.New(t, *m.St)
	m.formFor = t
	m.ex.kind = formCall
	m.form.SetSize(m.layout.modalW, m.layout.modalH)
	if replace {
		m.screen = screenForm
	} else {
		m.push(screenForm)
	}
	return m, nil
}

// applyForm acts on the call form's decision.
func (m *Model) applyForm(act form.Action, cmd tea.Cmd) (*Model, tea.Cmd) {
	if m.ex.kind != formCall {
		return m.applyArgsForm(act, cmd)
	}
	switch a := act.(type) {
	case form.Submit:
		return m.startCall(m.formFor, a.Args, cmd)
	case form.Cancel:
		m.pop()
	}
	return m, cmd
}

// requestQuit quits at once, or asks first while a call runs or a person's answer
// is awaited.
func (m *Model) requestQuit() (*Model, tea.Cmd) {
	el := m.q.Count(question.KindElicitation) + m.q.Count(question.KindSampling)
	n := m.waiting()
	changes := hazards.OverrideCount(m.over)
	if !m.call.Running && n == 0 && el == 0 && changes == 0 {
		return m.quit()
	}
	var lines []string
	if m.call.Running {
		lines = append(lines, "• A call is running; it will be cancelled.")
	}
	if n > 0 {
		lines = append(lines, "• "+strconv.Itoa(n)+" approval"+common.Plural(n)+" waiting; every waiting call is denied when airlock closes.")
	}
	if el > 0 {
		lines = append(lines, "• "+strconv.Itoa(el)+" server request"+common.Plural(el)+" for input will be cancelled.")
	}
	if changes > 0 {
		// What-if changes live only in this session: quitting loses them.
		lines = append(lines, "• "+strconv.Itoa(changes)+" unsaved what-if change"+common.Plural(changes)+" will be lost; E exports them as a TOML fragment first.")
	}
	return m, m.q.AskQuit(lines)
}

func (m *Model) quit() (*Model, tea.Cmd) {
	if m.call.Running {
		m.call.End()
	}
	return m, tea.Quit
}

// waiting is the number of approvals that wait for the person.
func (m *Model) waiting() int {
	return max(m.q.Count(question.KindApproval), len(m.sess.Engine().Pending()))
}

// typing reports whether something takes text now: the call form, the filter
// being typed, an elicitation form or a denial's reason. A question that
// arrives meanwhile waits behind the badge instead of taking focus.
func (m *Model) typing() bool {
	return m.screen == screenForm || (m.screen == screenMain && m.tools.Typing) || (m.screen == screenRoots && m.roots.Typing()) || m.q.Typing()
}

// addApproval queues the question of p. The person's own call, asked while the
// person waits for it on the call screen, opens at once (and still arms); every
// other call waits to open until nothing takes text and the keyboard is quiet.
func (m *Model) addApproval(p *model.Pending) (bool, tea.Cmd) {
	mine := p.Request.Client == "" && m.call.Running && m.screen == screenCall && !m.typing() &&
		(p.Request.Context == "" || p.Request.Context == model.PersonContext)
	return m.q.AddApproval(p, mine)
}

// applyOutcome carries out what the person decided in a question.
func (m *Model) applyOutcome(out question.Outcome) (*Model, tea.Cmd) {
	switch o := out.(type) {
	case question.Approved:
		id, resp, ok := dialog.Response(o.Action)
		if !ok {
			return m, nil
		}
		word := "✓ allowed"
		switch resp.Answer {
		case model.Deny:
			word = "⊘ denied"
		case model.AllowForContext:
			word = "✓ allowed for this context"
		}
		m.status = word + ": " + common.Inline(m.St, o.Pending.Tool.Ref.Qualified(), 40)
		if r := resp.Remember; r != nil {
			// The engine saves the rule before the call goes on; a rule it refuses
			// denies the call, and the activity says why.
			always := "always-allow"
			if resp.Answer == model.Deny {
				always = "always-deny"
			}
			name := common.Inline(m.St, o.Pending.Tool.Ref.Qualified(), 40)
			m.status = word + " · saving " + always + " rule (K): " + name + " when " + common.Inline(m.St, trust.DescribeWhen(r.When), 80)
			if len(r.When) == 0 {
				m.status = word + " · saving " + always + " rule (K): every call of " + name + ", whatever its arguments"
			}
		}
		return m, answerCmd(m.sess.Engine(), id, resp)
	case question.Elicited:
		m.status = "answered " + common.Inline(m.St, o.Elicitation.Server, 32) + "'s request: " + o.Action
		return m, answerElicitationCmd(m.sess, o.Elicitation.ID, o.Action, o.Content)
	case question.Sampled:
		word := "replied to"
		if o.Decline {
			word = "declined"
		}
		m.status = word + " " + common.Inline(m.St, o.Request.Server, 32) + "'s sampling request"
		return m, answerSamplingCmd(m.sess, o.Request.ID, model.SamplingAnswer{Decline: o.Decline, Reply: o.Reply})
	case question.QuitAnswer:
		if o.Quit {
			return m.quit()
		}
	case question.ClearTaintAnswer:
		return m.applyClearTaint(o)
	case question.Chose:
		if id, ok := strings.CutPrefix(o.Tag, choiceRevokeRule); ok {
			return m.applyRevokeRule(id, o.Second)
		}
		if name, ok := strings.CutPrefix(o.Tag, choiceRuleOff); ok {
			return m.applyRuleOff(name, o.Second)
		}
		if strings.HasPrefix(o.Tag, choiceLoosen) {
			return m.applyLoosen(o.Tag, o.Second)
		}
		switch o.Tag {
		case choiceReset:
			if !o.Second {
				m.status = "kept the what-if changes"
				return m, nil
			}
			n := m.sess.ResetOverrides()
			m.status = "undid " + strconv.Itoa(n) + " what-if change" + common.Plural(n) + ": everything is as the config says"
		case choiceRestoreTour:
			if o.Second {
				m.status = "kept the tour's changes: U undoes the what-if changes, the taint stays until cleared"
				return m, nil
			}
			return m, m.restoreTour()
		}
	case question.AcceptAnswer:
		if !o.Accept {
			m.status = "kept blocked"
			return m, nil
		}
		m.status = "pinning the new definition of " + common.Inline(m.St, o.Ref.Qualified(), 40) + "…"
		return m, acceptPinsCmd(m.sess, o.Ref, o.Fingerprint)
	}
	return m, nil
}

// queueItems is the approvals that wait, oldest first.
func (m *Model) queueItems() []*model.Pending {
	return queue.Order(m.q.Approvals())
}

// modalOpen reports whether anything is drawn over the screen.
func (m *Model) modalOpen() bool {
	return m.q.Open() || m.overlay.Open || m.queue.Open || m.screen == screenForm
}
