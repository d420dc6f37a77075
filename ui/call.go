package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/progress"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/screens/result"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// callView is the person's own call while it runs: what is called, a progress bar
// when the server reports progress with a total, otherwise the spinner and the
// elapsed time; esc cancels it.
type callView struct {
	*common.Common
	keys CallKeyMap

	// gen numbers calls; messages of an earlier call are dropped.
	gen     uint64
	running bool
	tool    session.ToolInfo
	args    json.RawMessage
	started time.Time
	// cancel cancels the running call's context (go-sdk then sends
	// notifications/cancelled). A func value: copies of the model share it safely.
	cancel context.CancelFunc
	// cancelled is set when the person pressed esc.
	cancelled bool

	callID   string
	progress session.Progress
	hasProg  bool
	bar      progress.Model

	width, height int
}

func newCallView(com *common.Common) callView {
	return callView{Common: com, keys: DefaultCallKeyMap(), bar: newBar(com.St)}
}

func newBar(st *theme.Styles) progress.Model {
	opts := []progress.Option{progress.WithoutPercentage()}
	if st.NoColor {
		opts = append(opts, progress.WithColors(lipgloss.NoColor{}), progress.WithFillCharacters('█', '░'))
	} else {
		opts = append(opts, progress.WithDefaultBlend())
	}
	return progress.New(opts...)
}

// SetSize sets the outer size.
func (c *callView) SetSize(w, h int) {
	c.width, c.height = w, h
	iw, _ := common.PaneInner(w, h)
	c.bar.SetWidth(max(iw-20, 10))
}

// begin starts showing a call; the root starts the Cmd.
func (c *callView) begin(gen uint64, t session.ToolInfo, args json.RawMessage, now time.Time, cancel context.CancelFunc) {
	*c = callView{Common: c.Common, keys: c.keys, bar: c.bar, width: c.width, height: c.height,
		gen: gen, running: true, tool: t, args: args, started: now, cancel: cancel}
}

// end stops showing the call and releases its context.
func (c *callView) end() {
	if c.cancel != nil {
		c.cancel()
	}
	c.running, c.cancel = false, nil
}

// setProgress takes a progress notification of the running call.
func (c *callView) setProgress(p session.Progress) {
	if c.callID == "" {
		c.callID = p.CallID
	}
	if p.CallID != c.callID {
		return
	}
	c.progress, c.hasProg = p, true
}

// Update handles esc (cancel); the root routes keys here while the call runs and no
// dialog is open.
func (c callView) Update(msg tea.Msg) (callView, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && key.Matches(k, c.keys.Cancel) && c.running && !c.cancelled {
		c.cancelled = true
		if c.cancel != nil {
			c.cancel()
		}
	}
	return c, nil
}

// View renders the running call. spin is the spinner's frame and now the time.
func (c callView) View(spin string, now time.Time) string {
	st := c.St
	iw, _ := common.PaneInner(c.width, c.height)
	elapsed := now.Sub(c.started).Truncate(100 * time.Millisecond)
	lines := []string{
		st.Header.Render(common.Fit("Calling "+common.Inline(st, c.tool.Ref.Qualified(), iw-20), iw)),
		"",
	}
	switch {
	case c.cancelled:
		lines = append(lines, st.WarnText.Render("cancelling… ")+st.Muted.Render("the server was told to stop (notifications/cancelled)"))
	case c.hasProg && c.progress.Total > 0:
		pct := min(max(c.progress.Progress/c.progress.Total, 0), 1)
		lines = append(lines, c.bar.ViewAs(pct)+" "+strconv.Itoa(int(pct*100))+"%  "+
			fmtNum(c.progress.Progress)+"/"+fmtNum(c.progress.Total)+"  "+elapsed.String())
	case c.hasProg:
		lines = append(lines, st.WarnText.Render(spin)+" "+fmtNum(c.progress.Progress)+" done · "+elapsed.String())
	default:
		lines = append(lines, st.WarnText.Render(spin)+" running · "+elapsed.String())
	}
	if c.hasProg && c.progress.Message != "" {
		// the server's own words, said to be its own
		msg := c.progress.Message
		if c.progress.Server != "" {
			msg = c.progress.Server + " says: " + msg
		}
		lines = append(lines, "", common.Inline(st, msg, iw))
	}
	lines = append(lines, "", st.Key.Render("arguments"))
	lines = append(lines, common.BlockLines(st, cli.PrettyJSON(c.args), iw, common.MaxShownBytes, st.Gutter.Render(common.Gutter))...)
	return common.PaneBox(st, true, c.width, c.height, lines)
}

func fmtNum(f float64) string {
	if f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return fmt.Sprintf("%.1f", f)
}

// newCallRequest builds the person's call of a tool with the form's arguments.
func newCallRequest(t session.ToolInfo, args json.RawMessage, sink func(session.Progress)) session.CallRequest {
	return session.CallRequest{Server: t.Ref.Server, Tool: t.Ref.Tool, Args: args, OnProgress: sink}
}

// keyMap returns the bindings that apply now, for the footer.
func (c callView) keyMap() common.KeyMapFunc {
	return common.KeyMapFunc{Short: c.keys.ShortHelp(), Full: c.keys.FullHelp()}
}

// startCall runs the person's call in a Cmd with a cancellable context, and pumps
// its progress.
func (m *Model) startCall(t session.ToolInfo, args json.RawMessage, cmd tea.Cmd) (*Model, tea.Cmd) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	gen := m.call.gen + 1
	ctx, cancel := context.WithCancel(m.ctx)
	ch := make(chan session.Progress, 16)
	done := make(chan struct{})
	m.call.begin(gen, t, args, m.now(), cancel)
	m.progCh, m.done = ch, done
	m.screen = screenCall
	m.status = "calling " + common.Inline(m.St, t.Ref.Qualified(), 40) + "…"
	req := newCallRequest(t, args, progressSink(ch))
	return m, tea.Batch(cmd, startCall(ctx, m.sess, req, gen, done), waitProgress(gen, ch, done), m.startSpinner())
}

// callDone shows a finished call's result, or returns to where the person was if
// they cancelled it.
func (m *Model) callDone(msg callDoneMsg) (*Model, tea.Cmd) {
	if msg.gen != m.call.gen || !m.call.running {
		return m, nil // a call that was replaced: stale
	}
	cancelled := m.call.cancelled
	t, args := m.call.tool, m.call.args
	m.call.end()
	m.taint = m.sess.Engine().Taint("")
	q := common.Inline(m.St, t.Ref.Qualified(), 40)
	var denied *session.DeniedError
	switch {
	case cancelled:
		m.status = "call of " + q + " cancelled"
		m.pop()
		return m, nil
	case errors.Is(msg.err, audit.ErrBroken):
		m.status = "⊘ call of " + q + " denied: the audit log cannot record it"
	case errors.As(msg.err, &denied):
		m.status = "⊘ call of " + q + " denied"
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
	return &result.Outcome{CallID: o.CallID, Verdict: o.Verdict, Result: o.Result, Duration: o.Duration}
}
