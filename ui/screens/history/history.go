// Package history is the protocol history screen (H): every JSON-RPC message of one
// server's connections, both ways, newest last, with the time, the direction, the kind
// and the method (server text: escaped), filterable by direction (d) and by method
// (m); enter shows one message's bytes, s saves them to a file of airlock's naming
// (ui/screens/content). The root hands it the server's kept history; it never reads
// the session.
package history

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/list"
	"github.com/airlock-mcp/airlock/ui/pager"
	"github.com/airlock-mcp/airlock/ui/screen"
	"github.com/airlock-mcp/airlock/ui/screens/content"
)

// KeyMap holds the keys of the history view.
type KeyMap struct {
	common.ScrollKeyMap
	Direction key.Binding
	Method    key.Binding
	Open      key.Binding
	Save      key.Binding
	Refresh   key.Binding
	Source    key.Binding
	Back      key.Binding
}

// DefaultKeyMap returns the history view's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		ScrollKeyMap: common.DefaultScrollKeyMap(),
		Direction:    key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "both ways / sent / received")),
		Method:       key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "next method shown (all first)")),
		Open:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "the message's bytes")),
		Save:         key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "save the message's bytes (0600)")),
		Refresh:      key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "show messages since opened")),
		Source:       key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next source: each server, then each agent session")),
		Back:         key.NewBinding(key.WithKeys("esc", "H", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap, in words short enough for 80 columns.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{common.ShortKey(k.Source, "source"), common.ShortKey(k.Direction, "way"), common.ShortKey(k.Method, "method"),
		common.ShortKey(k.Open, "bytes"), common.ShortKey(k.Save, "save"), k.Back}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Column(), {k.Source, k.Direction, k.Method, k.Open, k.Save, k.Refresh, k.Back}}
}

// Direction is which way the shown messages went.
type Direction int

const (
	Both     Direction = iota
	Sent               // airlock to the server
	Received           // the server to airlock
)

func (d Direction) String() string {
	switch d {
	case Sent:
		return "→ sent"
	case Received:
		return "← received"
	}
	return "both ways"
}

// Model is the history of one server or one agent session at the gateway (H.Agent
// set): a list of its messages, or one message's bytes.
type Model struct {
	*common.Common
	keys KeyMap
	// H is the history shown.
	H model.History
	// Dir and Method filter the list ("" is every method).
	Dir    Direction
	Method string
	// Raw is the message shown by its bytes, nil while the list shows.
	Raw *model.HistoryMessage
	// Saved maps a message's Seq to the file it was saved to.
	Saved map[uint64]string

	shown         []int // indexes into H.Messages that pass the filter
	list          list.Model
	vp            pager.Pane
	width, height int
}

// New returns the history screen over the root's Common.
func New(com *common.Common) Model {
	keys := DefaultKeyMap()
	l := list.New()
	l.Keys = keys.ScrollKeyMap
	return Model{Common: com, keys: keys, list: l, vp: pager.NewPane(keys.ScrollKeyMap)}
}

// Open shows a server's history from its newest message, unfiltered.
func (v *Model) Open(h model.History) {
	if v.Saved == nil || h.Server != v.H.Server || h.Agent != v.H.Agent {
		v.Saved = map[uint64]string{}
	}
	v.H, v.Dir, v.Method, v.Raw = h, Both, "", nil
	v.filter(0)
	v.list.Cursor = v.list.Last()
	v.list.ScrollTo(0)
}

// Refresh shows a newer state of the same server's history, keeping the message under
// the cursor (or the newest, when the cursor was on the newest).
func (v *Model) Refresh(h model.History) {
	keep := v.seqAt(v.list.Cursor)
	atEnd := v.list.Cursor == v.list.Last()
	v.H = h
	v.filter(keep)
	if atEnd {
		v.list.Cursor = v.list.Last()
	}
	v.list.ScrollTo(0)
}

func (v *Model) seqAt(i int) uint64 {
	if i < 0 || i >= len(v.shown) {
		return 0
	}
	return v.H.Messages[v.shown[i]].Seq
}

// filter rebuilds the shown rows, the cursor on the message numbered keep when shown.
func (v *Model) filter(keep uint64) {
	v.shown = v.shown[:0]
	for i, e := range v.H.Messages {
		if (v.Dir == Sent && !e.Out) || (v.Dir == Received && e.Out) {
			continue
		}
		if v.Method != "" && e.Method != v.Method {
			continue
		}
		v.shown = append(v.shown, i)
	}
	v.list.SetRows(len(v.shown), nil)
	v.list.SetVisible(v.rows())
	v.list.Cursor = v.list.Last()
	for i := range v.shown {
		if v.seqAt(i) == keep {
			v.list.Cursor = i
		}
	}
}

// methods is every method in the history, sorted.
func (v *Model) methods() []string {
	seen := map[string]bool{}
	for _, e := range v.H.Messages {
		if e.Method != "" {
			seen[e.Method] = true
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// rows is how many messages the list shows: the pane's inside less the heading and
// the filter line.
func (v *Model) rows() int {
	_, ih := common.PaneInner(v.width, v.height)
	return max(ih-2, 1)
}

// SetSize sets the outer size.
func (v *Model) SetSize(w, h int) {
	v.width, v.height = w, h
	v.vp.SetSize(w, h)
	v.list.SetVisible(v.rows())
	v.list.ScrollTo(0)
	if v.Raw != nil {
		v.renderRaw()
	}
}

// Refreshing asks the root for the history as it is now: the agent session Agent's
// when set, else the server's.
type Refreshing struct{ Server, Agent string }

// NextSource asks the root to show the next source's history after the one shown
// (the server Server, or the agent session Agent): each server, then each agent
// session kept, then the first server again.
type NextSource struct{ Server, Agent string }

// SavedMsg is a content.Saved of the history screen.
type SavedMsg struct{ content.Saved }

// SetSaved notes where messages were saved.
func (v *Model) SetSaved(paths map[int]string) {
	if v.Saved == nil {
		v.Saved = map[uint64]string{}
	}
	for n, p := range paths {
		v.Saved[uint64(n)] = p
	}
	if v.Raw != nil {
		v.vp.KeepScroll(v.renderRaw)
	}
}

// Update handles keys.
func (v *Model) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil, nil
	}
	if v.Raw != nil {
		switch {
		case key.Matches(k, v.keys.Back):
			v.Raw = nil
			return nil, nil
		case key.Matches(k, v.keys.Save):
			return v.save(*v.Raw), nil
		}
		return nil, v.vp.Update(msg)
	}
	switch {
	case key.Matches(k, v.keys.Back):
		return screen.Back{}, nil
	case key.Matches(k, v.keys.Direction):
		v.Dir = (v.Dir + 1) % 3
		v.filter(v.seqAt(v.list.Cursor))
		v.list.ScrollTo(0)
	case key.Matches(k, v.keys.Method):
		ms := v.methods()
		i := slices.Index(ms, v.Method) // -1 for "": the first method next
		v.Method = ""
		if i+1 < len(ms) {
			v.Method = ms[i+1]
		}
		v.filter(v.seqAt(v.list.Cursor))
		v.list.ScrollTo(0)
	case key.Matches(k, v.keys.Refresh):
		return Refreshing{Server: v.H.Server, Agent: v.H.Agent}, nil
	case key.Matches(k, v.keys.Source):
		return NextSource{Server: v.H.Server, Agent: v.H.Agent}, nil
	case key.Matches(k, v.keys.Open):
		if e, ok := v.cursorMsg(); ok {
			v.Raw = &e
			v.renderRaw()
			v.vp.GotoTop()
		}
	case key.Matches(k, v.keys.Save):
		if e, ok := v.cursorMsg(); ok {
			return v.save(e), nil
		}
	default:
		if v.list.Update(k) {
			v.list.ScrollTo(0)
		}
	}
	return nil, nil
}

func (v *Model) cursorMsg() (model.HistoryMessage, bool) {
	c := v.list.Cursor
	if c < 0 || c >= len(v.shown) {
		return model.HistoryMessage{}, false
	}
	return v.H.Messages[v.shown[c]], true
}

// save asks the root to write e's bytes to a new owner-only file named
// airlock-SERVER-METHOD-TIME-SEQ.json.
func (v *Model) save(e model.HistoryMessage) screen.Intent {
	what := e.Method
	if what == "" {
		what = e.Kind
	}
	server := v.H.Server
	if v.H.Agent != "" {
		server = "agent"
	}
	return content.SaveOf(server, what, e.Seq, []content.Blob{{N: int(e.Seq), MIME: "application/json", Data: e.Raw}},
		func(s content.Saved) tea.Msg { return SavedMsg{s} })
}

// kindWord is a message's kind in at most five cells.
func kindWord(k string) string {
	switch k {
	case "request":
		return "req"
	case "notification":
		return "notif"
	case "response":
		return "resp"
	case "error":
		return "error"
	}
	return "?"
}

func arrow(out bool) string {
	if out {
		return "→"
	}
	return "←"
}

// row is one message as one line of width cells.
func (v *Model) row(e model.HistoryMessage, selected bool, width int) string {
	st := v.St
	size := common.ByteSize(e.Size)
	if e.Cut {
		size += "✂"
	}
	lead := e.At.Format("15:04:05.000") + " " + arrow(e.Out) + " " + common.Fit(kindWord(e.Kind), 5) + " "
	id := ""
	if e.ID != "" {
		id = " #" + common.CutMiddle(common.PlainInline(e.ID), 16)
	}
	rest := max(width-common.CellWidth(lead)-common.CellWidth(size)-1, 4)
	name := common.Inline(st, e.Method, 0) + id
	if common.CellWidth(name) > rest {
		// Cut in the middle, the id kept: the end of a method tells
		// notifications/tools/list_changed from notifications/tools/list_ch….
		name = common.CutMiddle(common.PlainInline(e.Method), max(rest-common.CellWidth(id), 4)) + id
	}
	line := lead + common.Fit(name, rest) + " " + size
	if selected {
		return st.Selected.Render(common.Fit(line, width))
	}
	if e.Kind == "error" {
		return st.WarnText.Render(line)
	}
	if e.Out {
		return line
	}
	return st.Muted.Render(lead) + common.Fit(name, rest) + " " + size
}

// View renders the list or the one message.
func (v *Model) View() string {
	if v.Raw != nil {
		return v.vp.Box(v.St, "History · "+v.source(24)+" · message "+strconv.FormatUint(v.Raw.Seq, 10)+v.vp.Percent(v.St))
	}
	st := v.St
	iw, _ := common.PaneInner(v.width, v.height)
	head := "History · " + v.source(max(iw-common.CellWidth("History · "), 24))
	method := "every method"
	if v.Method != "" {
		method = common.Inline(st, v.Method, 32)
	}
	// The counts share the filter's line, so that the heading has the whole width
	// for whose history it is.
	shown := v.Dir.String() + " · " + method + " · " + strconv.Itoa(len(v.shown)) + " of " + strconv.Itoa(len(v.H.Messages)) + " kept"
	if v.H.Dropped > 0 {
		shown += " · " + strconv.Itoa(v.H.Dropped) + " older dropped"
	}
	if common.CellWidth("showing "+shown) <= iw {
		shown = "showing " + shown
	}
	filter := st.Muted.Render(common.Fit(shown, iw))
	lines := []string{st.Header.Render(common.Fit(head, iw)), filter}
	if len(v.shown) == 0 {
		if len(v.H.Messages) == 0 && v.H.Agent != "" {
			lines = append(lines, st.Muted.Render("no messages kept of this agent session"))
		} else if len(v.H.Messages) == 0 {
			lines = append(lines, st.Muted.Render("no messages kept: the server has not connected, or the history is off"))
		} else {
			lines = append(lines, st.Muted.Render("no message passes the filter (d, m)"))
		}
	}
	for i := v.list.Offset(); i < v.list.End(); i++ {
		lines = append(lines, v.row(v.H.Messages[v.shown[i]], i == v.list.Cursor, iw))
	}
	return common.PaneBox(st, true, v.width, v.height, lines)
}

// renderRaw sets the pager's content to the shown message: what it is, then its bytes
// (server text: escaped, in the gutter), indented for reading when they are JSON.
func (v *Model) renderRaw() {
	e, st, iw := *v.Raw, v.St, v.vp.InnerWidth()
	way := "sent by airlock"
	if v.H.Agent != "" {
		way = "sent by airlock to the agent"
	}
	if !e.Out {
		way = "received from " + v.source(48)
	}
	what := e.Kind
	if e.Method != "" {
		what += " " + common.Inline(st, e.Method, 48)
	}
	if e.ID != "" {
		what += " #" + common.Inline(st, e.ID, 24)
	}
	lines := common.WrapOwn(what+" · "+way+" · "+e.At.Format("2006-01-02 15:04:05.000"), iw, "", "  ")
	size := common.ByteSize(e.Size)
	if e.Cut {
		size += ", of which the first " + common.ByteSize(len(e.Raw)) + " are kept"
	}
	note := size + " · shown indented; s saves the bytes as kept"
	if p, ok := v.Saved[e.Seq]; ok {
		note = size + " · saved to " + common.Inline(st, p, 60)
	}
	lines = append(lines, common.WrapOwn(st.Muted.Render(note), iw, "", "  ")...)
	lines = append(lines, "")
	body := e.Raw
	var ind bytes.Buffer
	if !e.Cut && json.Indent(&ind, e.Raw, "", "  ") == nil {
		body = ind.Bytes()
	}
	lines = append(lines, common.BlockLines(st, string(body), iw, 1<<20, st.Gutter.Render(common.Gutter))...)
	v.vp.SetContent(strings.Join(lines, "\n"))
}

// KeyMap returns the bindings that apply now, for the footer.
func (v *Model) KeyMap() help.KeyMap {
	if v.Raw != nil {
		k := []key.Binding{common.ShortKey(v.keys.Down, "scroll"), v.keys.Save, common.ShortKey(v.keys.Back, "the list")}
		return common.KeyMapFunc{Short: k, Full: [][]key.Binding{v.keys.Column(), {v.keys.Save, v.keys.Back}}}
	}
	return common.KeyMapFunc{Short: v.keys.ShortHelp(), Full: v.keys.FullHelp()}
}

// source names what the history is of in at most width cells: the server, or the
// agent session (its number first, so a cut never makes two alike) and whether it
// ended.
func (v *Model) source(width int) string {
	if v.H.Agent == "" {
		return common.Inline(v.St, v.H.Server, width)
	}
	label := "agent " + v.H.Server
	if v.H.Ended {
		label = "ended " + label
	}
	return common.Inline(v.St, label, width)
}
