package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/screens/activity"
	"github.com/airlock-mcp/airlock/ui/screens/logs"
)

// eventMsg carries one session event into the update loop.
type eventMsg struct{ event model.Event }

// sessionClosedMsg says the session's event queue closed (the Manager was closed) or
// the run's context ended: the pump is not re-armed.
type sessionClosedMsg struct{}

// waitEvent is the session event pump: a Cmd that blocks until the next event. The
// root re-arms it after every event, as in bubbletea's examples/realtime. It captures
// the Manager and the context, never the model.
//
// A call's end or a log line only adds to a list, so the pump gathers what follows
// it within eventBatchWindow into one eventsMsg: the frame is drawn once per batch, not
// once per event (a busy gateway's calls cost bubbletea a View each). Any other event
// ends the batch at once, so a question or a status change is never held back.
func waitEvent(ctx context.Context, m *session.Manager) tea.Cmd {
	return func() tea.Msg {
		e, ok := m.Next(ctx)
		if !ok {
			return sessionClosedMsg{}
		}
		if !batchable(e) {
			return eventMsg{event: e}
		}
		batch := eventsMsg{e}
		wctx, cancel := context.WithTimeout(ctx, eventBatchWindow)
		defer cancel()
		for len(batch) < maxEventBatch {
			e, ok := m.Next(wctx)
			if !ok {
				break // the window ended (or the session did: the next pump says so)
			}
			batch = append(batch, e)
			if !batchable(e) {
				break
			}
		}
		return batch
	}
}

// eventsMsg carries several session events, in order, into one update.
type eventsMsg []model.Event

// eventBatchWindow is how long the pump gathers list-only events after the first:
// the activity list and logs show a call at most this late.
const eventBatchWindow = 100 * time.Millisecond

const maxEventBatch = 512

// batchable reports whether e only adds an entry to a list, so that showing it a
// little later, together with the ones after it, changes nothing a person decides on.
func batchable(e model.Event) bool { return model.ListOnly(e) }

// callDoneMsg reports that the call with generation gen returned.
type callDoneMsg struct {
	gen     uint64
	outcome *session.Outcome
	err     error
}

// progressMsg is a progress notification for the call with generation gen.
type progressMsg struct {
	gen uint64
	p   model.Progress
}

// answeredMsg reports the engine's reply to the person's answer to an approval.
type answeredMsg struct {
	id     uint64
	answer string
	err    error
}

// elicitAnsweredMsg reports the reply to the person's answer to an elicitation.
type elicitAnsweredMsg struct {
	id     uint64
	action string
	err    error
}

// reconnectedMsg reports the reply to a reconnect request.
type reconnectedMsg struct {
	server string
	err    error
}

// logsRefreshMsg asks for the open logs view to be drawn again.
type logsRefreshMsg struct{}

// pinsAcceptedMsg reports the reply to accepting a changed definition.
type pinsAcceptedMsg struct {
	ref      trust.Ref
	accepted []string
	err      error
}

// acceptPinsCmd pins the definition of ref whose fingerprint the person was shown:
// if the server changed it again since, nothing is pinned and the error says so.
func acceptPinsCmd(m *session.Manager, ref trust.Ref, fingerprint string) tea.Cmd {
	return func() tea.Msg {
		acc, err := m.AcceptPins(ref.Server, model.Reviewed{Tools: map[string]string{ref.Tool: fingerprint}})
		return pinsAcceptedMsg{ref: ref, accepted: acc, err: err}
	}
}

// demoDoneMsg reports that the demo action ran.
type demoDoneMsg struct{}

// startCall runs one call. The context is cancelled by esc; the Cmd captures the
// Manager, the request and the channels by value.
func startCall(ctx context.Context, m *session.Manager, req model.CallRequest, gen uint64, done chan struct{}) tea.Cmd {
	return func() tea.Msg {
		out, err := m.Call(ctx, req)
		close(done)
		return callDoneMsg{gen: gen, outcome: out, err: err}
	}
}

// waitProgress pumps the progress of one call: it returns the next notification,
// or nil once the call is done.
func waitProgress(gen uint64, ch <-chan model.Progress, done <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		select {
		case p := <-ch:
			return progressMsg{gen: gen, p: p}
		case <-done:
			return nil
		}
	}
}

// progressSink returns an OnProgress callback that never blocks the session: a
// notification that finds the channel full is dropped (the next one carries newer
// numbers anyway).
func progressSink(ch chan<- model.Progress) func(model.Progress) {
	return func(p model.Progress) {
		select {
		case ch <- p:
		default:
		}
	}
}

func answerCmd(e *approval.Engine, id uint64, r model.Response) tea.Cmd {
	return func() tea.Msg {
		return answeredMsg{id: id, answer: r.Answer.String(), err: e.Answer(id, r)}
	}
}

func answerElicitationCmd(m *session.Manager, id uint64, action string, content map[string]any) tea.Cmd {
	return func() tea.Msg {
		return elicitAnsweredMsg{id: id, action: action, err: m.AnswerElicitation(id, action, content)}
	}
}

// answerSamplingCmd answers a sampling request (reported like an elicitation's).
func answerSamplingCmd(m *session.Manager, id uint64, a model.SamplingAnswer) tea.Cmd {
	return func() tea.Msg {
		action := "reply"
		if a.Decline {
			action = "decline"
		}
		return elicitAnsweredMsg{id: id, action: action, err: m.AnswerSampling(id, a)}
	}
}

func reconnectCmd(m *session.Manager, name string) tea.Cmd {
	return func() tea.Msg {
		return reconnectedMsg{server: name, err: m.Reconnect(name)}
	}
}

func demoCmd(f func()) tea.Cmd {
	return func() tea.Msg {
		f()
		return demoDoneMsg{}
	}
}

// handleEvent applies one session event.
func (m *Model) handleEvent(e model.Event) tea.Cmd {
	m.taint, m.taintProblem = m.sess.Engine().TaintAndStoreProblem("")
	m.rulesProblem = m.sess.Engine().RulesProblem()
	m.ratesProblem = m.sess.Engine().RatesProblem()
	switch e := e.(type) {
	case model.ServerChanged:
		if e.Gen < m.gens[e.Server] {
			return nil // from a connection that was since replaced
		}
		m.gens[e.Server] = e.Gen
		m.setSnapshot(m.sess.Snapshot())
		m.status = common.Inline(m.St, e.Server, 32) + ": " + e.Status.String()
		if sv, ok := m.snap.Server(e.Server); ok && sv.Status == model.StatusFailed && sv.Err != nil {
			m.status += ": " + common.Inline(m.St, sv.Err.Error(), 120)
		}
		if n := m.changedSincePinned(e.Server); n > 0 {
			m.status += " · ⊘ " + strconv.Itoa(n) + " tool" + common.Plural(n) + " changed since pinned: blocked until reviewed"
		}
		m.tourSync()
		return m.startSpinner()
	case model.OverridesChanged:
		// A live change (a what-if): tiers, policies and hazards moved at once.
		m.setSnapshot(m.sess.Snapshot())
		m.tourSync()
	case model.LogLine:
		m.ring.Add(logs.Entry{Server: e.Server, Source: e.Source, Text: e.Text})
		if m.screen == screenLogs && m.logs.Source == "" {
			// Re-render at most ten times a second, however fast a server writes.
			m.logsDirty = true
			if !m.logsTick {
				m.logsTick = true
				return tea.Tick(100*time.Millisecond, func(time.Time) tea.Msg { return logsRefreshMsg{} })
			}
		}
	case model.CallFinished:
		// Filed when it ended, so the list stays in time order with the status
		// messages around it.
		m.acts.Add(activity.Entry{At: e.At.Add(e.Duration), Call: e})
		if e.Rule != "" && trust.DecidedBy(e.DecidedBy) == trust.DecidedByRule {
			// A call no one was asked about: the status line says which rule
			// decided it (the person's and agents' alike).
			word, verb := "✓ ", " allowed by rule "
			if e.Decision == "deny" {
				word, verb = "⊘ ", " denied by rule "
			}
			m.status = word + common.Inline(m.St, trust.Ref{Server: e.Server, Tool: e.Tool}.Qualified(), 40) + verb + common.Inline(m.St, e.Rule, 80)
		}
	case model.Dropped:
		m.ring.Dropped += e.Count
		if e.Calls > 0 {
			// The session let the oldest unread calls go: the list must not look
			// complete.
			m.status = fmt.Sprintf("! %d calls ended while the screen was not keeping up and are not listed; the audit log has their records", e.Calls)
		}
	case model.AuthorizationRequested:
		// airlock opened the browser; the URL (escaped) is also in the logs (l) to copy.
		m.status = "⚿ " + common.Inline(m.St, e.Server, 32) + " needs you to log in: a browser window opened; the URL is in the logs (l)"
		m.ring.Add(logs.Entry{Server: e.Server, Source: "airlock", Text: "authorize airlock in your browser: " + e.URL})
	case model.ApprovalRequested:
		if e.Pending == nil {
			return nil
		}
		added, cmd := m.addApproval(e.Pending)
		if added {
			who := "your call"
			if e.Pending.Request.Client != "" {
				// The client name is the agent's own; its token is who it is.
				who = "agent " + common.Inline(m.St, e.Pending.Request.Client, 24)
				if c := e.Pending.Request.Context; c != "" {
					who += " · " + common.Inline(m.St, c, 24)
				}
			}
			m.status = approvalNeeded + who + " of " + common.Inline(m.St, e.Pending.Tool.Ref.Qualified(), 40)
			return tea.Batch(cmd, m.notify(approvalSummary(e.Pending)))
		}
		return cmd
	case model.ApprovalClosed:
		p, cmd := m.q.WithdrawApproval(e.ID)
		if p != nil {
			m.status = "approval of " + common.Inline(m.St, p.Tool.Ref.Qualified(), 40) + " closed: " + common.Inline(m.St, e.Outcome, 40)
		}
		return cmd
	case model.Progress:
		if m.call.Running && e.CallID != "" && e.CallID == m.call.CallID {
			m.call.SetProgress(e)
		}
	case model.ElicitationRequested:
		if e.Elicitation != nil {
			m.status = "✎ " + common.Inline(m.St, e.Elicitation.Server, 32) + " asks you for input"
			return tea.Batch(m.q.AddElicitation(e.Elicitation, m.askerTrust(e.Elicitation.Server)),
				m.notify("airlock: server "+e.Elicitation.Server+" asks you for input"))
		}
	case model.SamplingRequested:
		if e.Request != nil {
			m.status = "✎ " + common.Inline(m.St, e.Request.Server, 32) + " asks for an LLM completion (sampling)"
			return tea.Batch(m.q.AddSampling(e.Request, m.askerTrust(e.Request.Server)),
				m.notify("airlock: server "+e.Request.Server+" asks for an LLM completion (sampling)"))
		}
	case model.SamplingClosed:
		r, cmd := m.q.WithdrawSampling(e.ID)
		if r != nil {
			m.status = "the sampling request from " + common.Inline(m.St, r.Server, 32) + " was withdrawn"
		}
		return cmd
	case model.ResourceUpdated:
		m.resourceUpdated(e)
	case model.ElicitationClosed:
		el, cmd := m.q.WithdrawElicitation(e.ID)
		if el != nil {
			m.status = "the request for input from " + common.Inline(m.St, el.Server, 32) + " was withdrawn"
		}
		return cmd
	}
	return nil
}

// changedSincePinned counts a server's tools blocked because their definition
// changed since it was pinned.
func (m *Model) changedSincePinned(server string) int {
	n := 0
	for i := range m.snap.Tools {
		if t := m.snap.Tools[i]; t.Ref.Server == server && t.Pin == trust.PinChanged {
			n++
		}
	}
	return n
}

// pinnedFor returns the pinned definition of a tool that changed since pinned, for
// the detail view's diff.
func (m *Model) pinnedFor(t model.ToolInfo) json.RawMessage {
	if t.Pin != trust.PinChanged {
		return nil
	}
	rec, ok := m.sess.PinnedDefinition(t.Ref.Server, t.Ref.Tool)
	if !ok {
		return nil
	}
	return rec.Definition
}

// scopeFailure is the error of the selected server when it failed.
func (m *Model) scopeFailure() string {
	if sv, ok := m.servers.SelectedInfo(); ok && sv.Status == model.StatusFailed {
		if sv.Err != nil {
			return sv.Err.Error()
		}
		return "no reason given"
	}
	return ""
}

// auditStatus is the status line's word on the audit log: "" while it is sound, in
// red and naming the problem while it is damaged, cannot be written (a full disk),
// its head file cannot be written, or it holds a damaged record. A damaged or unwritable log denies every call, so the
// person sees why before the next "denied" and not only two keys away. It leads the
// status line, and what to run comes before the problem: a cut line keeps both.
func (m *Model) auditStatus() string {
	err := m.auditProblem()
	if err == nil {
		return ""
	}
	text := "✗ audit log: " + common.Inline(m.St, err.Error(), 160)
	var d *audit.DamageError
	if errors.As(err, &d) {
		// The path and the full advice are long and the same every time:
		// Activity has them (auditActivity).
		text = "✗ audit log damaged, calls refused (airlock audit verify): " + common.Inline(m.St, d.Problem, 100)
	}
	return m.St.ErrorText.Render(text)
}

// auditActivity is the audit log's problem in full, for Activity, where the status
// line's "(v: all of it)" sends the person: the path, the problem and both commands.
// "" while the log is sound.
func (m *Model) auditActivity() string {
	err := m.auditProblem()
	if err == nil {
		return ""
	}
	var d *audit.DamageError
	if errors.As(err, &d) {
		return "✗ audit log " + common.Inline(m.St, d.Path, 200) + " is damaged, so every call is refused: " +
			common.Inline(m.St, d.Problem, 300) + ". See what happened with `airlock audit verify`; to go on, " +
			"`airlock audit seal --start-new` moves the log aside, whole, and starts a new one " +
			"(give each this session's --config, or --demo after airlock demo)"
	}
	return "✗ audit log: " + common.Inline(m.St, err.Error(), 600)
}

// noteAudit adds the audit log's problem to Activity each time it changes.
func (m *Model) noteAudit() {
	a := m.auditActivity()
	if a == m.auditSeen {
		return
	}
	m.auditSeen = a
	if a != "" {
		m.acts.Add(activity.Entry{At: m.now(), Status: a})
	}
}

// askerTrust is the trust of the server that asks the person something: untrusted
// when the snapshot does not know it.
func (m *Model) askerTrust(server string) trust.ServerTrust {
	if sv, ok := m.snap.Server(server); ok {
		return sv.Trust
	}
	return trust.Untrusted
}

// auditProblem is what keeps the audit log from recording, nil while it records
// (or when there is no session).
func (m *Model) auditProblem() error {
	if m.sess == nil {
		return nil
	}
	return m.sess.AuditProblem()
}
