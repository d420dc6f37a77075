package ui

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/screens/result"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// Activity is everything that happened in the session, newest first: every call
// through the session (the person's and every agent's, decided, run, failed or
// denied) and every status-line message, so that nothing an agent did and nothing
// the status line had to cut is lost.

const (
	// maxActivity bounds the entries kept; the oldest go first.
	maxActivity = 1000
	// activityResults is how many of the newest calls keep their full result; older
	// entries keep their summary line (the audit log keeps every record).
	activityResults = 50
)

// activityEntry is one call or one status message.
type activityEntry struct {
	at time.Time
	// status is a status-line message (airlock's own words, any server part
	// already escaped); empty for a call.
	status string
	call   session.CallFinished
	// resultDropped says an older call's result was let go to bound memory.
	resultDropped bool
}

// activityLog keeps entries oldest first. Like logRing it is a value with a shared
// backing array: only the root appends.
type activityLog struct {
	entries []activityEntry
	calls   int // calls among entries
	// seq counts every entry ever added: a view's cursor follows an entry
	// through additions.
	seq int
}

func (a *activityLog) add(e activityEntry) {
	if len(a.entries) >= maxActivity {
		drop := maxActivity / 4
		for _, d := range a.entries[:drop] {
			if d.status == "" {
				a.calls--
			}
		}
		n := copy(a.entries, a.entries[drop:])
		clear(a.entries[n:])
		a.entries = a.entries[:n]
	}
	a.entries = append(a.entries, e)
	a.seq++
	if e.status != "" {
		return
	}
	a.calls++
	// Let go of the result of the call that just fell out of the newest ones.
	seen := 0
	for i := len(a.entries) - 1; i >= 0; i-- {
		if a.entries[i].status != "" {
			continue
		}
		if seen++; seen > activityResults {
			if a.entries[i].call.Result != nil {
				a.entries[i].call.Result = nil
				a.entries[i].resultDropped = true
			}
			break
		}
	}
}

// len is the number of entries.
func (a activityLog) len() int { return len(a.entries) }

// newest returns the i-th newest entry (0 is the newest).
func (a activityLog) newest(i int) activityEntry { return a.entries[len(a.entries)-1-i] }

// lastCall returns the newest call.
func (a activityLog) lastCall() (activityEntry, bool) {
	for i := len(a.entries) - 1; i >= 0; i-- {
		if a.entries[i].status == "" {
			return a.entries[i], true
		}
	}
	return activityEntry{}, false
}

// who names who made a call: "you" or the agent's client name.
func (e activityEntry) who(st *theme.Styles) string {
	if e.call.Client == "" {
		return "you"
	}
	return common.Inline(st, e.call.Client, 24)
}

// whose is the context of an agent's call ("token:ci-bot"), "" for the person's:
// the client name is the agent's own choice, the token is who it is, so two agents
// claiming one name are told apart.
func (e activityEntry) whose(st *theme.Styles) string {
	if e.call.Client == "" || e.call.Context == "" {
		return ""
	}
	return common.Inline(st, e.call.Context, 24)
}

// decision is how a call was decided, in words: "allowed by policy".
func (e activityEntry) decision() string {
	c := e.call
	verb := "not decided"
	switch c.Decision {
	case "allow":
		verb = "allowed"
	case "deny":
		verb = "denied"
	}
	if c.Decision == "" {
		return verb
	}
	if c.Rule != "" && trust.DecidedBy(c.DecidedBy) == trust.DecidedByRule {
		return verb + " by rule " + common.PlainInline(c.Rule)
	}
	return verb + " by " + decidedByWords(c.DecidedBy)
}

// shortDecision is decision for one row: a rule by its name, without where it
// was written (the record says it).
func (e activityEntry) shortDecision() string {
	c := e.call
	if c.Rule != "" && trust.DecidedBy(c.DecidedBy) == trust.DecidedByRule {
		name, _, _ := strings.Cut(c.Rule, " (")
		verb := "allowed"
		if c.Decision == "deny" {
			verb = "denied"
		}
		return verb + " by rule " + common.PlainInline(name)
	}
	return e.decision()
}

// decidedByWords says who or what decided, in the glossary's words. Values
// airlock does not know yet are shown as they are (they are airlock's own).
func decidedByWords(by string) string {
	switch trust.DecidedBy(by) {
	case trust.DecidedByPerson:
		return "you"
	case trust.DecidedByTaintThenPerson:
		return "you (asked because of taint)"
	case trust.DecidedByGrant:
		return "your allow for this context"
	case trust.DecidedByRule:
		return "a rule"
	case trust.DecidedByTimeout:
		return "timeout (nobody answered)"
	case trust.DecidedByAgentCancelled:
		return "the agent (it cancelled)"
	case trust.DecidedByAgentGone:
		return "the agent (it disconnected)"
	case trust.DecidedByPin:
		return "pin (definition changed)"
	case trust.DecidedByDisabled:
		return "what-if (turned off)"
	case trust.DecidedByUnknownTool:
		return "unknown tool"
	case "":
		return "-"
	}
	return by
}

// outcomeMark is the outcome with its glyph.
func (e activityEntry) outcomeMark(st *theme.Styles) string {
	switch e.call.Outcome {
	case "ok":
		return st.OKText.Render("✓ ok")
	case "tool-error":
		return st.ErrorText.Render("✗ tool error")
	case "denied":
		return st.ErrorText.Render("⊘ denied")
	case "cancelled":
		return st.WarnText.Render("⊗ cancelled")
	case "agent-gone":
		return st.WarnText.Render("⊗ agent gone")
	}
	return st.ErrorText.Render("✗ failed")
}

// duration is a call's whole duration, short.
func duration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "<1ms"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return d.Truncate(100 * time.Millisecond).String()
}

// callRow is one call on one line of width cells: time, tool, who (an agent's
// client name and its token: "claude-code · token:ci-bot"), tier, decision,
// outcome, duration. When the line is too narrow the least telling
// parts go first; the tool's name is cut by cutName, keeping what tells it apart.
func (e activityEntry) callRow(st *theme.Styles, width int) string {
	c := e.call
	tm := e.at.Format("15:04:05")
	tool := common.PlainInline(trust.LegName(trust.Ref{Server: c.Server, Tool: c.Tool}.Qualified()))
	tier := common.OrDash(c.Tier)
	parts := []string{e.who(st), e.whose(st), tier, e.shortDecision(), e.outcomeMark(st), duration(c.Duration)}
	// Drop from the right of the priority list until the tool gets 16 cells.
	drop := []int{2, 1, 5, 3} // tier, token, duration, decision
	for _, d := range drop {
		if width-rowWidth(tm, parts)-2 >= min(16, common.CellWidth(tool)) {
			break
		}
		parts[d] = ""
	}
	right := joinNonEmpty(parts, st.Muted.Render(" · "))
	toolW := max(width-common.CellWidth(tm)-2-common.CellWidth(right)-2, 4)
	name := common.CutName(tool, toolW)
	return common.Fit(st.Muted.Render(tm)+"  "+st.Key.Render(common.Fit(name, toolW))+"  "+right, width)
}

func rowWidth(tm string, parts []string) int {
	w := common.CellWidth(tm)
	for _, p := range parts {
		if p != "" {
			w += common.CellWidth(p) + 3
		}
	}
	return w
}

func joinNonEmpty(parts []string, sep string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

// stripLine is the main screen's one-line summary of the newest call.
func (a activityLog) stripLine(st *theme.Styles, width int) string {
	e, ok := a.lastCall()
	if !ok {
		return ""
	}
	lead, hint := st.Muted.Render("last call "), st.Muted.Render("  (v: activity)")
	if width < 80 {
		lead, hint = "", st.Muted.Render("  (v)")
	}
	return common.Fit(lead+e.callRow(st, max(width-common.CellWidth(lead)-common.CellWidth(hint), 20))+hint, width)
}

// recordError rebuilds the error a call ended with, for the result renderer.
func (e activityEntry) recordError() error {
	c := e.call
	switch c.Outcome {
	case "denied":
		return &session.DeniedError{Verdict: trust.Verdict{Action: trust.Deny, By: trust.DecidedBy(c.DecidedBy), Reasons: c.Reasons}, Reason: c.Reason}
	case "cancelled":
		if len(c.Reasons) > 0 {
			// Withdrawn while it waited for a person: the reasons say why it asked.
			return &session.WithdrawnError{Verdict: trust.Verdict{Action: trust.Deny, By: trust.DecidedBy(c.DecidedBy), Reasons: c.Reasons}, Err: context.Canceled}
		}
		return context.Canceled
	case "agent-gone":
		return session.ErrAgentGone
	case "failed":
		if c.Err != "" {
			return errors.New(c.Err)
		}
	}
	return nil
}

// recordContent is the full record of one entry: who, context, decision and why,
// then the arguments and the result, every server- or agent-controlled part
// escaped.
func (e activityEntry) recordContent(st *theme.Styles, width int) string {
	if e.status != "" {
		return strings.Join(append([]string{st.Header.Render("status message at " + e.at.Format("15:04:05"))},
			common.WrapOwn(e.status, width, "", "")...), "\n")
	}
	c := e.call
	label := func(s string) string { return st.Key.Render(common.Fit(s, 10)) + " " }
	indent := strings.Repeat(" ", 11)
	var lines []string
	add := func(name, value string) { lines = append(lines, common.WrapOwn(value, width, label(name), indent)...) }
	add("tool", common.Inline(st, trust.Ref{Server: c.Server, Tool: c.Tool}.Qualified(), 0))
	who := "you (the person at airlock)"
	if c.Client != "" {
		who = "agent " + common.Inline(st, c.Client, 0) // the context has its own line
	}
	add("who", who)
	ctx := "yours"
	if c.Context != "" {
		ctx = common.Inline(st, c.Context, 0)
	}
	add("context", ctx)
	add("when", c.At.Format("2006-01-02 15:04:05")+" · took "+duration(c.Duration)+" in all, waiting for a person included")
	add("tier", common.OrDash(c.Tier))
	add("decision", e.decision())
	add("outcome", e.outcomeMark(st))
	if e.resultDropped {
		lines = append(lines, st.Muted.Render("the result of this older call is no longer kept in memory; the audit log has its record"))
	}
	lines = append(lines, "")
	out := &result.Outcome{CallID: c.CallID, Verdict: trust.Verdict{By: trust.DecidedBy(c.DecidedBy), Reasons: c.Reasons}, Result: c.Result, Duration: c.Ran}
	if c.Decision != "allow" {
		out = nil
	}
	res := result.Result{Tool: session.ToolInfo{Ref: trust.Ref{Server: c.Server, Tool: c.Tool}}, Args: c.Args, Outcome: out, Err: e.recordError()}
	lines = append(lines, result.Content(st, res, width))
	return strings.Join(lines, "\n")
}

// ActivityKeyMap holds the keys of the activity view.
type ActivityKeyMap struct {
	common.ScrollKeyMap
	Open key.Binding
	Back key.Binding
}

// DefaultActivityKeyMap returns the activity view's keys.
func DefaultActivityKeyMap() ActivityKeyMap {
	return ActivityKeyMap{
		ScrollKeyMap: common.DefaultScrollKeyMap(),
		Open:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "full record")),
		Back:         key.NewBinding(key.WithKeys("esc", "v", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap.
func (k ActivityKeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Down, k.Open, k.Back} }

// FullHelp implements help.KeyMap.
func (k ActivityKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Column(), {k.Open, k.Back}}
}

// activityView lists the activity newest first; enter opens one entry's full
// record in a scrollable view.
type activityView struct {
	*common.Common
	keys ActivityKeyMap
	// cursor is the selected entry's sequence number (activityLog.seq at the
	// time it was added, minus one), so it stays on its entry as new ones come.
	cursor int
	open   bool
	vp     viewport.Model
	width  int
	height int
}

func newActivityView(com *common.Common) activityView {
	keys := DefaultActivityKeyMap()
	vp := viewport.New()
	vp.KeyMap = keys.ViewportKeys()
	return activityView{Common: com, keys: keys, vp: vp, cursor: -1}
}

// SetSize sets the outer size.
func (v *activityView) SetSize(w, h int) {
	v.width, v.height = w, h
	iw, ih := common.PaneInner(w, h)
	v.vp.SetWidth(iw)
	v.vp.SetHeight(max(ih-1, 1))
}

// index is the cursor's position newest first in log, clamped.
func (v activityView) index(log activityLog) int {
	if log.len() == 0 {
		return 0
	}
	if v.cursor < 0 {
		return 0
	}
	i := log.seq - 1 - v.cursor
	return min(max(i, 0), log.len()-1)
}

func (v *activityView) setIndex(log activityLog, i int) {
	i = min(max(i, 0), max(log.len()-1, 0))
	v.cursor = log.seq - 1 - i
}

// activityAction is what a key in the activity view asks the root to do.
type activityAction int

const (
	activityNone activityAction = iota
	activityBack
)

// Update handles a key.
func (v activityView) Update(k tea.KeyPressMsg, log activityLog) (activityView, activityAction, tea.Cmd) {
	if v.open {
		if key.Matches(k, v.keys.Back) {
			v.open = false
			return v, activityNone, nil
		}
		var cmd tea.Cmd
		v.vp, cmd = v.vp.Update(k)
		return v, activityNone, cmd
	}
	_, ih := common.PaneInner(v.width, v.height)
	page := max(ih-2, 1)
	i := v.index(log)
	switch {
	case key.Matches(k, v.keys.Back):
		return v, activityBack, nil
	case key.Matches(k, v.keys.Up):
		v.setIndex(log, i-1)
	case key.Matches(k, v.keys.Down):
		v.setIndex(log, i+1)
	case key.Matches(k, v.keys.PageUp):
		v.setIndex(log, i-page)
	case key.Matches(k, v.keys.PageDown):
		v.setIndex(log, i+page)
	case key.Matches(k, v.keys.Top):
		v.setIndex(log, 0)
	case key.Matches(k, v.keys.Bottom):
		v.setIndex(log, log.len()-1)
	case key.Matches(k, v.keys.Open) && log.len() > 0:
		v.setIndex(log, i)
		v.open = true
		iw, _ := common.PaneInner(v.width, v.height)
		v.vp.SetContent(log.newest(v.index(log)).recordContent(v.St, iw))
		v.vp.GotoTop()
	}
	return v, activityNone, nil
}

// View renders the list, or the open record.
func (v activityView) View(log activityLog) string {
	st := v.St
	iw, ih := common.PaneInner(v.width, v.height)
	if v.open {
		lines := append([]string{st.Header.Render(common.Fit("Activity · full record (esc: back to the list)", iw))}, strings.Split(v.vp.View(), "\n")...)
		return common.PaneBox(st, true, v.width, v.height, lines)
	}
	head := "Activity · " + strconv.Itoa(log.calls) + " call" + common.Plural(log.calls) + " by you or agents, and status messages · newest first"
	if common.CellWidth(head) > iw {
		head = "Activity · " + strconv.Itoa(log.calls) + " call" + common.Plural(log.calls) + " · newest first"
	}
	lines := []string{st.Header.Render(common.Fit(head, iw))}
	if log.len() == 0 {
		lines = append(lines, st.Muted.Render("nothing yet: calls by you or by an agent through the gateway appear here"))
		return common.PaneBox(st, true, v.width, v.height, lines)
	}
	rows := ih - 1
	sel := v.index(log)
	// Each entry's lines: a call is one line, a status message wraps.
	var body []string
	selTop, selEnd := 0, 0
	for i := 0; i < log.len() && (len(body) < rows+sel+1 || i <= sel); i++ {
		e := log.newest(i)
		var ls []string
		if e.status == "" {
			ls = []string{e.callRow(st, iw-2)}
		} else {
			ls = common.WrapOwn(e.status, iw-2, st.Muted.Render(e.at.Format("15:04:05"))+"  ", strings.Repeat(" ", 10))
		}
		if i == sel {
			selTop, selEnd = len(body), len(body)+len(ls)
		}
		for j, l := range ls {
			mark := "  "
			if i == sel && j == 0 {
				mark = "▸ "
			}
			if i == sel {
				l = st.Selected.Render(common.Fit(mark+l, iw))
			} else {
				l = mark + l
			}
			body = append(body, l)
		}
	}
	top := 0
	if selEnd > rows {
		top = selEnd - rows
	}
	if selTop < top {
		top = selTop
	}
	body = body[top:]
	if len(body) > rows {
		body = body[:rows]
	}
	return common.PaneBox(st, true, v.width, v.height, append(lines, body...))
}

// keyMap returns the bindings that apply now, for the footer.
func (v activityView) keyMap() common.KeyMapFunc {
	if v.open {
		back := v.keys.Back
		back.SetHelp("esc", "back to the list")
		return common.KeyMapFunc{Short: []key.Binding{v.keys.Down, v.keys.PageDown, back}, Full: v.keys.FullHelp()}
	}
	return common.KeyMapFunc{Short: v.keys.ShortHelp(), Full: v.keys.FullHelp()}
}
