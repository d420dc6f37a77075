// Package activity is the Activity screen (v) and the log it shows: every call
// through the session (the person's and every agent's, decided, run, failed or
// denied) and every status-line message, newest first, each call's full record
// one key away. The root adds the entries (from the session's CallFinished
// events and its own status line) and hands the screen the log; the screen
// never reads the model.
package activity

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/screen"
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
	// activityHeld bounds the arguments and results the entries hold
	// (model.CallFinished.HeldBytes): past it the oldest calls let go of theirs,
	// the newest call never. A thousand calls of 8 MiB arguments would hold 8 GiB.
	activityHeld = 32 << 20
)

// Entry is one call or one status message.
type Entry struct {
	At time.Time
	// Status is a status-line message (airlock's own words, any server part
	// already escaped); empty for a call.
	Status string
	Call   model.CallFinished
	// resultDropped and argsDropped say an older call's result or arguments were
	// let go to bound memory (or were never kept: model.CallFinished.Unkept).
	resultDropped, argsDropped bool
	held                       int // HeldBytes of what Call still holds
}

// Log keeps entries oldest first. Like the logs screen's Ring it is a value with a
// shared backing array: only the root appends.
type Log struct {
	entries []Entry
	Calls   int // calls among entries
	held    int // the sum of the entries' held
	// seq counts every entry ever added: a view's cursor follows an entry
	// through additions.
	seq int
}

// Add keeps e, forgetting the oldest quarter when full and older calls' results.
func (a *Log) Add(e Entry) {
	if len(a.entries) >= maxActivity {
		drop := maxActivity / 4
		for _, d := range a.entries[:drop] {
			if d.Status == "" {
				a.Calls--
			}
			a.held -= d.held
		}
		n := copy(a.entries, a.entries[drop:])
		clear(a.entries[n:])
		a.entries = a.entries[:n]
	}
	if e.Status == "" {
		if e.Call.Unkept {
			e.argsDropped, e.resultDropped = true, true
		}
		e.held = e.Call.HeldBytes()
		a.held += e.held
	}
	a.entries = append(a.entries, e)
	a.seq++
	if e.Status != "" {
		return
	}
	a.Calls++
	// Let go of the result of the call that just fell out of the newest ones.
	seen := 0
	for i := len(a.entries) - 1; i >= 0; i-- {
		if a.entries[i].Status != "" {
			continue
		}
		if seen++; seen > activityResults {
			if a.entries[i].Call.Result != nil {
				a.letGo(i, false)
			}
			break
		}
	}
	// Past the bound, the oldest calls let go of their arguments and results.
	for i := 0; a.held > activityHeld && i < len(a.entries)-1; i++ {
		if a.entries[i].held > 0 {
			a.letGo(i, true)
		}
	}
}

// letGo lets go of entry i's result, and with args of its arguments too.
func (a *Log) letGo(i int, args bool) {
	d := &a.entries[i]
	if d.Call.Result != nil {
		d.Call.Result, d.resultDropped = nil, true
	}
	if args && d.Call.Args != nil {
		d.Call.Args, d.argsDropped = nil, true
	}
	a.held -= d.held
	d.held = d.Call.HeldBytes()
	a.held += d.held
}

// len is the number of entries.
func (a Log) len() int { return len(a.entries) }

// newest returns the i-th newest entry (0 is the newest).
func (a Log) newest(i int) Entry { return a.entries[len(a.entries)-1-i] }

// lastCall returns the newest call.
func (a Log) lastCall() (Entry, bool) {
	for i := len(a.entries) - 1; i >= 0; i-- {
		if a.entries[i].Status == "" {
			return a.entries[i], true
		}
	}
	return Entry{}, false
}

// who names who made a call: "you" or the agent's client name.
func (e Entry) who(st *theme.Styles) string {
	if e.Call.Client == "" {
		return "you"
	}
	return common.Inline(st, e.Call.Client, 24)
}

// whose is the context of an agent's call ("token:ci-bot"), "" for the person's:
// the client name is the agent's own choice, the token is who it is, so two agents
// claiming one name are told apart.
func (e Entry) whose(st *theme.Styles) string {
	if e.Call.Client == "" || e.Call.Context == "" {
		return ""
	}
	return common.Inline(st, e.Call.Context, 24)
}

// decision is how a call was decided, in words (model.DecisionSentence): "asked
// because of taint; you allowed it"; a rule that decided is named.
func (e Entry) decision() string {
	c := e.Call
	if c.Rule != "" && trust.DecidedBy(c.DecidedBy) == trust.DecidedByRule && c.Decision != "" {
		return ruleVerb(c.Decision) + " by argument rule " + common.PlainInline(c.Rule)
	}
	return common.PlainInline(model.DecisionSentence(c.Decision, c.DecidedBy))
}

// shortDecision is decision for one row: a rule by its name, without where it
// was written (the record says it).
func (e Entry) shortDecision() string {
	c := e.Call
	if c.Rule != "" && trust.DecidedBy(c.DecidedBy) == trust.DecidedByRule && c.Decision != "" {
		name, _, _ := strings.Cut(c.Rule, " (")
		return ruleVerb(c.Decision) + " by rule " + common.PlainInline(name)
	}
	return e.decision()
}

func ruleVerb(decision string) string {
	if decision == "deny" {
		return "denied"
	}
	return "allowed"
}

// outcomeMark is the outcome with its glyph, in its style; an outcome it does not
// know reads "failed".
func (e Entry) outcomeMark(st *theme.Styles) string {
	style, mark := st.ErrorText, "✗ failed"
	switch e.Call.Outcome {
	case "ok":
		style, mark = st.OKText, "✓ ok"
	case "tool-error":
		mark = "✗ tool error"
	case "result-invalid":
		mark = "✗ result invalid"
	case "denied":
		mark = "⊘ denied"
	case "cancelled":
		style, mark = st.WarnText, "⊗ cancelled"
	case "agent-gone":
		style, mark = st.WarnText, "⊗ agent gone"
	}
	return style.Render(mark)
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

// CallRow is one call on one line of width cells: time, tool, who (an agent's
// client name and its token: "claude-code · token:ci-bot"), tier, decision,
// outcome, duration. When the line is too narrow the least telling
// parts go first; the tool's name is cut by cutName, keeping what tells it apart.
func (e Entry) CallRow(st *theme.Styles, width int) string {
	c := e.Call
	tm := e.At.Format("15:04:05")
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

// StripLine is the main screen's one-line summary of the newest call.
func (a Log) StripLine(st *theme.Styles, width int) string {
	e, ok := a.lastCall()
	if !ok {
		return ""
	}
	lead, hint := st.Muted.Render("last call "), st.Muted.Render("  (v: activity)")
	if width < 80 {
		lead, hint = "", st.Muted.Render("  (v)")
	}
	return common.Fit(lead+e.CallRow(st, max(width-common.CellWidth(lead)-common.CellWidth(hint), 20))+hint, width)
}

// recordError rebuilds the error a call ended with, for the result renderer.
func (e Entry) recordError() error {
	c := e.Call
	switch c.Outcome {
	case "denied":
		return &model.DeniedError{Verdict: trust.Verdict{Action: trust.Deny, By: trust.DecidedBy(c.DecidedBy), Reasons: c.Reasons}, Reason: c.Reason}
	case "cancelled":
		if len(c.Reasons) > 0 {
			// Withdrawn while it waited for a person: the reasons say why it asked.
			return &model.WithdrawnError{Verdict: trust.Verdict{Action: trust.Deny, By: trust.DecidedBy(c.DecidedBy), Reasons: c.Reasons}, Err: context.Canceled}
		}
		return context.Canceled
	case "agent-gone":
		return model.ErrAgentGone
	case "result-invalid":
		return recordedError{text: c.Err, is: model.ErrResultSchema}
	case "failed":
		if c.Err != "" {
			return errors.New(c.Err)
		}
	}
	return nil
}

// recordedError is an error rebuilt from its record: its words as recorded, and
// the sentinel it was (errors.Is).
type recordedError struct {
	text string
	is   error
}

func (e recordedError) Error() string { return e.text }
func (e recordedError) Unwrap() error { return e.is }

// RecordContent is the full record of one entry: who, context, decision and why,
// then the arguments and the result, every server- or agent-controlled part
// escaped.
func (e Entry) RecordContent(st *theme.Styles, width int) string {
	if e.Status != "" {
		return strings.Join(append([]string{st.Header.Render("status message at " + e.At.Format("15:04:05"))},
			common.WrapOwn(e.Status, width, "", "")...), "\n")
	}
	c := e.Call
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
	took := " · took " + duration(c.Duration) + " in all"
	switch trust.DecidedBy(c.DecidedBy) {
	case trust.DecidedByPerson, trust.DecidedByTaintThenPerson, trust.DecidedByTimeout:
		took += ", waiting for a person included"
	}
	add("when", c.At.Format("2006-01-02 15:04:05")+took)
	add("tier", common.OrDash(c.Tier))
	add("decision", e.decision())
	add("outcome", e.outcomeMark(st))
	lines = append(lines, "")
	out := &result.Outcome{CallID: c.CallID, Verdict: trust.Verdict{Action: trust.Allow, By: trust.DecidedBy(c.DecidedBy), Reasons: c.Reasons}, Result: c.Result, Duration: c.Ran}
	if c.Decision != "allow" {
		out = nil
	}
	res := result.New(model.ToolInfo{Ref: trust.Ref{Server: c.Server, Tool: c.Tool}}, c.Args, out, e.recordError())
	res.ArgsUnkept = e.argsDropped
	res.ResultUnkept = e.resultDropped && out != nil && e.recordError() == nil
	lines = append(lines, result.Content(st, res, width))
	return strings.Join(lines, "\n")
}

// KeyMap holds the keys of the activity view.
type KeyMap struct {
	common.ScrollKeyMap
	Open key.Binding
	Back key.Binding
}

// DefaultKeyMap returns the activity view's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		ScrollKeyMap: common.DefaultScrollKeyMap(),
		Open:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "full record")),
		Back:         key.NewBinding(key.WithKeys("esc", "v", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Down, k.Open, k.Back} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Column(), {k.Open, k.Back}}
}

// Model lists the activity newest first; enter opens one entry's full
// record in a scrollable view.
type Model struct {
	*common.Common
	keys KeyMap
	// cursor is the selected entry's sequence number (Log.seq at the
	// time it was added, minus one), so it stays on its entry as new ones come.
	cursor int
	// Open says a record is shown in full; VP scrolls it.
	Open bool
	VP   viewport.Model
	// Log is the log shown, the root's, handed over before each use.
	Log    Log
	width  int
	height int
}

// New returns the activity screen over the root's Common.
func New(com *common.Common) Model {
	keys := DefaultKeyMap()
	vp := viewport.New()
	vp.KeyMap = keys.ViewportKeys()
	return Model{Common: com, keys: keys, VP: vp, cursor: -1}
}

// Reset shows the list again, from the newest entry.
func (v *Model) Reset() {
	v.Open = false
	v.cursor = -1
}

// SetSize sets the outer size.
func (v *Model) SetSize(w, h int) {
	v.width, v.height = w, h
	iw, ih := common.PaneInner(w, h)
	v.VP.SetWidth(iw)
	v.VP.SetHeight(max(ih-1, 1))
}

// index is the cursor's position newest first in log, clamped.
func (v *Model) index(log Log) int {
	if log.len() == 0 {
		return 0
	}
	if v.cursor < 0 {
		return 0
	}
	i := log.seq - 1 - v.cursor
	return min(max(i, 0), log.len()-1)
}

func (v *Model) setIndex(log Log, i int) {
	i = min(max(i, 0), max(log.len()-1, 0))
	v.cursor = log.seq - 1 - i
}

// Update handles a key.
func (v *Model) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil, nil
	}
	log := v.Log
	if v.Open {
		if key.Matches(k, v.keys.Back) {
			v.Open = false
			return nil, nil
		}
		var cmd tea.Cmd
		v.VP, cmd = v.VP.Update(k)
		return nil, cmd
	}
	_, ih := common.PaneInner(v.width, v.height)
	page := max(ih-2, 1)
	i := v.index(log)
	switch {
	case key.Matches(k, v.keys.Back):
		return screen.Back{}, nil
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
		v.Open = true
		iw, _ := common.PaneInner(v.width, v.height)
		v.VP.SetContent(log.newest(v.index(log)).RecordContent(v.St, iw))
		v.VP.GotoTop()
	}
	return nil, nil
}

// View renders the list, or the open record.
func (v *Model) View() string {
	log := v.Log
	st := v.St
	iw, ih := common.PaneInner(v.width, v.height)
	if v.Open {
		lines := append([]string{st.Header.Render(common.Fit("Activity · full record (esc: back to the list)", iw))}, strings.Split(v.VP.View(), "\n")...)
		return common.PaneBox(st, true, v.width, v.height, lines)
	}
	head := "Activity · " + strconv.Itoa(log.Calls) + " call" + common.Plural(log.Calls) + " by you or agents, and status messages · newest first"
	if common.CellWidth(head) > iw {
		head = "Activity · " + strconv.Itoa(log.Calls) + " call" + common.Plural(log.Calls) + " · newest first"
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
		if e.Status == "" {
			ls = []string{e.CallRow(st, iw-2)}
		} else {
			ls = common.WrapOwn(e.Status, iw-2, st.Muted.Render(e.At.Format("15:04:05"))+"  ", strings.Repeat(" ", 10))
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

// KeyMap returns the bindings that apply now, for the footer.
func (v *Model) KeyMap() help.KeyMap {
	if v.Open {
		back := v.keys.Back
		back.SetHelp("esc", "back to the list")
		return common.KeyMapFunc{Short: []key.Binding{v.keys.Down, v.keys.PageDown, back}, Full: v.keys.FullHelp()}
	}
	return common.KeyMapFunc{Short: v.keys.ShortHelp(), Full: v.keys.FullHelp()}
}
