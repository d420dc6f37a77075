package ui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/pager"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// maxLogLines bounds the log lines the UI keeps.
const maxLogLines = 1000

// logEntry is one line of a server's stderr or one logging notification, raw.
type logEntry struct {
	server, source, text string
}

// logRing keeps the newest maxLogLines entries. It is a value with a shared backing
// array: only the root appends, and a copy of the model never appends to it.
type logRing struct {
	entries []logEntry
	// dropped counts the lines the session's event queue dropped.
	dropped int
}

func (r *logRing) add(e logEntry) {
	if len(r.entries) >= maxLogLines {
		// Shift by a quarter at a time, so adding stays amortised O(1).
		n := copy(r.entries, r.entries[maxLogLines/4:])
		r.entries = r.entries[:n]
	}
	r.entries = append(r.entries, e)
}

// logsView shows the session's log events in arrival order, or one server's kept
// stderr (which also holds lines the event queue had to drop). Every line is
// server-controlled and escaped, wrapped in a gutter.
type logsView struct {
	*common.Common
	keys LogsKeyMap
	vp   pager.Pager
	// source is "" for the event log, else the server whose stderr is shown.
	source string
	// stderr is the shown server's stderr, fetched when the source was chosen.
	stderr        []string
	width, height int
}

func newLogsView(com *common.Common) logsView {
	keys := DefaultLogsKeyMap()
	vp := pager.New(keys.ScrollKeyMap)
	return logsView{Common: com, keys: keys, vp: vp}
}

// SetSize sets the outer size.
func (l *logsView) SetSize(w, h int) {
	l.width, l.height = w, h
	iw, ih := common.PaneInner(w, h)
	l.vp.SetWidth(iw)
	l.vp.SetHeight(max(ih-1, 1))
}

// logsAction is what a key in the logs view asks the root to do.
type logsAction int

const (
	logsNone logsAction = iota
	logsBack
	logsNextSource
)

// Update handles keys; scrolling goes to the viewport.
func (l logsView) Update(msg tea.Msg) (logsView, logsAction, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, l.keys.Back):
			return l, logsBack, nil
		case key.Matches(k, l.keys.Source):
			return l, logsNextSource, nil
		}
	}
	var cmd tea.Cmd
	cmd = l.vp.Update(msg)
	return l, logsNone, cmd
}

// render rebuilds the content, following the end when the view was at the end.
func (l *logsView) render(ring logRing) {
	follow := l.vp.AtBottom() || l.vp.TotalLineCount() == 0
	iw, _ := common.PaneInner(l.width, l.height)
	st := l.St
	var lines []string
	if l.source == "" {
		if ring.dropped > 0 {
			lines = append(lines, st.WarnText.Render("! "+strconv.Itoa(ring.dropped)+" log lines were dropped when events came too fast;")+
				st.Muted.Render(" each server's stderr keeps them (tab)"))
		}
		if len(ring.entries) == 0 {
			lines = append(lines, st.Muted.Render("no log lines from servers yet · calls (yours and agents') are in Activity (v)"))
		}
		for _, e := range ring.entries {
			prefix := st.Key.Render(common.Fit(common.Inline(st, e.server, 10), 10)+" "+common.Fit(common.Inline(st, e.source, 10), 10)) + " " + st.Gutter.Render(common.Gutter)
			lines = append(lines, logLines(st, e.text, iw, prefix)...)
		}
	} else {
		if len(l.stderr) == 0 {
			lines = append(lines, st.Muted.Render("no stderr kept for "+l.source))
		}
		for _, s := range l.stderr {
			lines = append(lines, logLines(st, s, iw, st.Gutter.Render(common.Gutter))...)
		}
	}
	l.vp.SetContent(strings.Join(lines, "\n"))
	if follow {
		l.vp.GotoBottom()
	}
}

// logLines wraps one raw log line under a prefix; continuation lines keep a gutter.
func logLines(st *theme.Styles, text string, width int, prefix string) []string {
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
func (l logsView) View() string {
	iw, _ := common.PaneInner(l.width, l.height)
	src := "events of every server (stderr and logging notifications)"
	if l.source != "" {
		src = "stderr kept for " + l.source
	}
	head := "Logs · " + src
	lines := append([]string{l.St.Header.Render(common.Fit(head, iw))}, strings.Split(l.vp.View(), "\n")...)
	return common.PaneBox(l.St, true, l.width, l.height, lines)
}

// keyMap returns the bindings that apply now, for the footer.
func (l logsView) keyMap() common.KeyMapFunc {
	return common.KeyMapFunc{Short: l.keys.ShortHelp(), Full: l.keys.FullHelp()}
}
