// Package logs is the Logs screen (l): the session's log events in arrival order,
// or one server's kept stderr, every line server-controlled and so escaped and
// wrapped in a gutter. The root owns the Ring the events are added to and hands
// it to Render; this package never reads the session.
package logs

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/pager"
	"github.com/airlock-mcp/airlock/ui/screen"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// MaxLines bounds the log lines the UI keeps.
const MaxLines = 1000

// Entry is one line of a server's stderr or one logging notification, raw.
type Entry struct {
	Server, Source, Text string
}

// Ring keeps the newest MaxLines entries. It is a value with a shared backing
// array: only the root appends, and a copy of the model never appends to it.
type Ring struct {
	Entries []Entry
	// Dropped counts the lines the session's event queue dropped.
	Dropped int
}

// Add keeps e, forgetting the oldest quarter when full.
func (r *Ring) Add(e Entry) {
	if len(r.Entries) >= MaxLines {
		// Shift by a quarter at a time, so adding stays amortised O(1).
		n := copy(r.Entries, r.Entries[MaxLines/4:])
		r.Entries = r.Entries[:n]
	}
	r.Entries = append(r.Entries, e)
}

// Model shows the session's log events in arrival order, or one server's kept
// stderr (which also holds lines the event queue had to drop). Every line is
// server-controlled and escaped, wrapped in a gutter.
type Model struct {
	*common.Common
	keys KeyMap
	// VP is the scrolled log.
	VP pager.Pane
	// Source is "" for the event log, else the server whose stderr is shown.
	Source string
	// Stderr is the shown server's stderr, fetched when the source was chosen.
	Stderr []string
}

// New returns the logs screen over the root's Common.
func New(com *common.Common) Model {
	keys := DefaultKeyMap()
	vp := pager.NewPane(keys.ScrollKeyMap)
	return Model{Common: com, keys: keys, VP: vp}
}

// SetSize sets the outer size.
func (l *Model) SetSize(w, h int) {
	l.VP.SetSize(w, h)
}

// NextSource asks the root to show the next source: the event log, then each
// server's stderr in turn.
type NextSource struct{}

// Update handles keys; scrolling goes to the pager.
func (l *Model) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, l.keys.Back):
			return screen.Back{}, nil
		case key.Matches(k, l.keys.Source):
			return NextSource{}, nil
		}
	}
	return nil, l.VP.Update(msg)
}

// Render rebuilds the content, following the end when the view was at the end.
func (l *Model) Render(ring Ring) {
	follow := l.VP.AtBottom() || l.VP.TotalLineCount() == 0
	iw := l.VP.InnerWidth()
	st := l.St
	var lines []string
	if l.Source == "" {
		if ring.Dropped > 0 {
			lines = append(lines, st.WarnText.Render("! "+strconv.Itoa(ring.Dropped)+" log lines were dropped when events came too fast;")+
				st.Muted.Render(" each server's stderr keeps them (tab)"))
		}
		if len(ring.Entries) == 0 {
			lines = append(lines, st.Muted.Render("no log lines from servers yet · calls (yours and agents') are in Activity (v)"))
		}
		for _, e := range ring.Entries {
			prefix := st.Key.Render(common.Fit(common.Inline(st, e.Server, 10), 10)+" "+common.Fit(common.Inline(st, e.Source, 10), 10)) + " " + st.Gutter.Render(common.Gutter)
			lines = append(lines, wrapLine(st, e.Text, iw, prefix)...)
		}
	} else {
		if len(l.Stderr) == 0 {
			lines = append(lines, st.Muted.Render("no stderr kept for "+l.Source))
		}
		for _, s := range l.Stderr {
			lines = append(lines, wrapLine(st, s, iw, st.Gutter.Render(common.Gutter))...)
		}
	}
	l.VP.SetContent(strings.Join(lines, "\n"))
	if follow {
		l.VP.GotoBottom()
	}
}

// wrapLine wraps one raw log line under a prefix; continuation lines keep a gutter.
func wrapLine(st *theme.Styles, text string, width int, prefix string) []string {
	ls := common.BlockLines(st, text, width, 8<<10, prefix)
	if len(ls) > 1 {
		pad := strings.Repeat(" ", max(lipgloss.Width(prefix)-lipgloss.Width(common.Gutter), 0)) + st.Gutter.Render(common.Gutter)
		for i := 1; i < len(ls); i++ {
			ls[i] = pad + strings.TrimPrefix(ls[i], prefix)
		}
	}
	return ls
}

// View renders the heading and the scrolled log in a pane.
func (l *Model) View() string {
	src := "events of every server (stderr and logging notifications)"
	if l.Source != "" {
		src = "stderr kept for " + l.Source
	}
	head := "Logs · " + src
	return l.VP.Box(l.St, head)
}

// KeyMap returns the bindings that apply now, for the footer.
func (l *Model) KeyMap() help.KeyMap {
	return common.KeyMapFunc{Short: l.keys.ShortHelp(), Full: l.keys.FullHelp()}
}

// KeyMap holds the keys of the logs view.
type KeyMap struct {
	common.ScrollKeyMap
	Source key.Binding
	Back   key.Binding
}

// DefaultKeyMap returns the logs view's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		ScrollKeyMap: common.DefaultScrollKeyMap(),
		Source:       key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "events / each server's stderr")),
		Back:         key.NewBinding(key.WithKeys("esc", "l", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Down, k.Source, k.Back} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Column(), {k.Source, k.Back}}
}
