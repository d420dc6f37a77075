package ui

// The modal queues: the call form, approval dialogs, servers' requests for input
// and the quit question. The root shows the topmost and acts on its decision.

import (
	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/dialog"
	"github.com/airlock-mcp/airlock/ui/form"
)

// openForm opens the call form for a tool. A blocked tool is never called, so its
// form does not open; the status says why.
func (m Model) openForm(t session.ToolInfo, back screen) (Model, tea.Cmd) {
	if t.Class.Tier == trust.TierBlocked {
		why := "blocked tools are never called"
		if n := len(t.Class.Reasons); n > 0 {
			why = t.Class.Reasons[n-1]
		}
		m.status = "⊘ " + inline(m.st, t.Ref.Qualified(), 40) + " is blocked: " + inline(m.st, why, 120)
		return m, nil
	}
	m.form = form.New(t, *m.st)
	m.formFor = t
	m.form.SetSize(m.layout.modalW, m.layout.modalH)
	m.back = back
	m.screen = screenForm
	return m, nil
}

// applyForm acts on the call form's decision.
func (m Model) applyForm(act form.Action, cmd tea.Cmd) (Model, tea.Cmd) {
	switch a := act.(type) {
	case form.Submit:
		return m.startCall(m.formFor, a.Args, cmd)
	case form.Cancel:
		m.screen = m.back
	}
	return m, cmd
}

// requestQuit quits at once, or asks first while a call runs or a person's answer
// is awaited.
func (m Model) requestQuit() (Model, tea.Cmd) {
	if m.call.running || m.waiting() > 0 || len(m.elicits) > 0 {
		m.quitting = true
		return m, nil
	}
	return m.quit()
}

func (m Model) quit() (Model, tea.Cmd) {
	if m.call.running {
		m.call.end()
	}
	m.quitting = false
	return m, tea.Quit
}

// waiting is the number of approvals that wait for the person.
func (m Model) waiting() int {
	return max(len(m.confirms), len(m.sess.Engine().Pending()))
}

// addConfirm queues the approval dialog of p unless it is queued already.
func (m *Model) addConfirm(p *session.Pending) bool {
	for _, c := range m.confirms {
		if c.ID() == p.ID {
			return false
		}
	}
	c := dialog.NewConfirm(p, *m.st)
	c.SetSize(m.layout.modalW, m.layout.modalH)
	m.confirms = append(m.confirms, c)
	return true
}

// applyConfirm answers the engine for an approval dialog's decision and closes it.
func (m *Model) applyConfirm(act dialog.Action) tea.Cmd {
	id, resp, ok := dialog.Response(act)
	if !ok {
		return nil
	}
	for i, c := range m.confirms {
		if c.ID() == id {
			m.confirms = append(m.confirms[:i:i], m.confirms[i+1:]...)
			word := "✓ allowed"
			switch resp.Answer {
			case session.Deny:
				word = "⊘ denied"
			case session.AllowForContext:
				word = "✓ allowed for this context"
			}
			m.status = word + ": " + inline(m.st, c.Pending().Tool.Ref.Qualified(), 40)
			break
		}
	}
	return answerCmd(m.sess.Engine(), id, resp)
}

// applyElicitation answers the shown elicitation with the form's decision.
func (m *Model) applyElicitation(act form.Action) tea.Cmd {
	if act == nil || len(m.elicits) == 0 {
		return nil
	}
	el := m.elicits[0]
	var action string
	var content map[string]any
	switch a := act.(type) {
	case form.Accept:
		action, content = "accept", a.Content
	case form.Decline:
		action = "decline"
	case form.Cancel:
		action = "cancel"
	default:
		return nil
	}
	m.elicits = m.elicits[1:]
	m.status = "answered " + inline(m.st, el.e.Server, 32) + "'s request: " + action
	return answerElicitationCmd(m.sess, el.e.ID, action, content)
}

// queueItems is the approvals that wait, oldest first.
func (m Model) queueItems() []*session.Pending {
	ps := make([]*session.Pending, len(m.confirms))
	for i, c := range m.confirms {
		ps[i] = c.Pending()
	}
	return queueOrder(ps)
}

// bringToFront shows the dialog of approval id next.
func (m *Model) bringToFront(id uint64) {
	for i, c := range m.confirms {
		if c.ID() == id {
			rest := append(append([]dialog.Confirm{c}, m.confirms[:i]...), m.confirms[i+1:]...)
			m.confirms = rest
			return
		}
	}
}

// modalOpen reports whether anything is drawn over the screen.
func (m Model) modalOpen() bool {
	return m.quitting || m.accepting != nil || m.overlay.open || m.queue.open ||
		len(m.confirms) > 0 || len(m.elicits) > 0 || m.screen == screenForm
}
