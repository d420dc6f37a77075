package ui

import (
	"context"
	"encoding/json"
	"errors"

	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/screens/result"
)

// newCallRequest builds the person's call of a tool with the form's arguments.
func newCallRequest(t model.ToolInfo, args json.RawMessage, sink func(model.Progress)) model.CallRequest {
	return model.CallRequest{Server: t.Ref.Server, Tool: t.Ref.Tool, Args: args, OnProgress: sink}
}

// startCall runs the person's call in a Cmd with a cancellable context, and pumps
// its progress.
func (m *Model) startCall(t model.ToolInfo, args json.RawMessage, cmd tea.Cmd) (*Model, tea.Cmd) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	gen := m.call.Gen + 1
	ctx, cancel := context.WithCancel(m.ctx)
	ch := make(chan model.Progress, 16)
	done := make(chan struct{})
	m.call.Begin(gen, t, args, m.now(), cancel)
	m.progCh, m.done = ch, done
	m.screen = screenCall
	m.status = "calling " + common.Inline(m.St, t.Ref.Qualified(), 40) + "…"
	req := newCallRequest(t, args, progressSink(ch))
	return m, tea.Batch(cmd, startCall(ctx, m.sess, req, gen, done), waitProgress(gen, ch, done), m.startSpinner())
}

// callDone shows a finished call's result, or returns to where the person was if
// they cancelled it.
func (m *Model) callDone(msg callDoneMsg) (*Model, tea.Cmd) {
	if msg.gen != m.call.Gen || !m.call.Running {
		return m, nil // a call that was replaced: stale
	}
	cancelled := m.call.Cancelled
	t, args := m.call.Tool, m.call.Args
	m.call.End()
	m.taint = m.sess.Engine().Taint("")
	q := common.Inline(m.St, t.Ref.Qualified(), 40)
	var denied *model.DeniedError
	switch {
	case cancelled:
		m.status = "call of " + q + " cancelled"
		m.pop()
		return m, nil
	case errors.Is(msg.err, audit.ErrBroken):
		m.status = "⊘ call of " + q + " denied: the audit log cannot record it"
	case errors.As(msg.err, &denied):
		m.status = "⊘ call of " + q + " denied"
	case errors.Is(msg.err, model.ErrResultSchema):
		m.status = "✗ " + q + " returned a result that does not match its output schema"
	case msg.err != nil:
		m.status = "✗ call of " + q + " failed"
	case msg.outcome != nil && msg.outcome.Result != nil && msg.outcome.Result.IsError:
		m.status = "✗ " + q + " reported an error"
	default:
		m.status = "✓ " + q + " returned"
	}
	m.result.Show(result.New(t, args, resultOutcome(msg.outcome), msg.err))
	m.screen = screenResult
	return m, nil
}

// resultOutcome is the session's outcome of a call in the fields the results
// screen shows; nil when the call did not run.
func resultOutcome(o *session.Outcome) *result.Outcome {
	if o == nil {
		return nil
	}
	return &result.Outcome{CallID: o.CallID, Verdict: o.Verdict, Result: o.Result, Duration: o.Duration, Checked: o.Checked}
}
