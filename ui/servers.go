package ui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// serversPane lists the servers with their connection state, trust, protocol and
// tool counts per tier. Row 0 is "all servers"; the selected row scopes the tools
// pane.
type serversPane struct {
	*common.Common
	keys    ServersKeyMap
	servers []session.ServerInfo
	// counts and badges are each server's rendered tier counts and trust badge,
	// kept with the list: styling them on every frame is most of a frame's cost.
	counts, badges []string
	// changed holds the servers whose trust this session changed (what-if).
	changed map[string]bool
	cursor  int // 0: all servers; i+1: servers[i]
	offset  int // first visible entry
	focused bool
	// frame is the spinner frame shown beside a connecting server.
	frame         string
	width, height int
}

func newServersPane(com *common.Common) serversPane {
	return serversPane{Common: com, keys: DefaultServersKeyMap(), frame: "◌"}
}

// SetSize sets the pane's outer size.
func (p *serversPane) SetSize(w, h int) {
	p.width, p.height = w, h
	p.clamp()
}

// setServers replaces the server list, keeping the selected server by name.
func (p *serversPane) setServers(servers []session.ServerInfo) {
	sel := p.selected()
	p.servers = servers
	p.restyle()
	p.cursor = 0
	for i, s := range servers {
		if s.Name == sel {
			p.cursor = i + 1
		}
	}
	p.clamp()
	p.updateKeys()
}

// restyle renders the per-server pieces that only change with the list or theme.
func (p *serversPane) restyle() {
	p.counts = make([]string, len(p.servers))
	p.badges = make([]string, len(p.servers))
	for i, s := range p.servers {
		p.counts[i] = tierCounts(p.St, s.Tiers)
		p.badges[i] = common.TrustBadge(p.St, s.Trust)
	}
}

// selected returns the selected server's name, "" for all servers.
func (p serversPane) selected() string {
	if p.cursor == 0 || p.cursor > len(p.servers) {
		return ""
	}
	return p.servers[p.cursor-1].Name
}

func (p serversPane) selectedInfo() (session.ServerInfo, bool) {
	if p.cursor == 0 || p.cursor > len(p.servers) {
		return session.ServerInfo{}, false
	}
	return p.servers[p.cursor-1], true
}

// updateKeys enables the bindings that make sense for the selection.
func (p *serversPane) updateKeys() {
	s, ok := p.selectedInfo()
	p.keys.Reconnect.SetEnabled(ok && s.Status != session.StatusConnecting)
	p.keys.Trust.SetEnabled(ok)
	p.keys.Info.SetEnabled(ok)
	if ok && s.Status == session.StatusFailed {
		p.keys.Reconnect.SetHelp("r", "reconnect "+s.Name)
	} else {
		p.keys.Reconnect.SetHelp("r", "reconnect")
	}
	n := len(p.servers)
	p.keys.Up.SetEnabled(p.cursor > 0)
	p.keys.Down.SetEnabled(p.cursor < n)
	p.keys.Top.SetEnabled(p.cursor > 0)
	p.keys.Bottom.SetEnabled(p.cursor < n)
}

// serversAction is what a key in the servers pane asks the root to do.
type serversAction int

const (
	serversNone serversAction = iota
	serversMoved
	serversFocusTools
	serversReconnect
	serversTrust
	serversInfo
)

// Update handles a key; the root routes keys here only while the pane has focus.
func (p serversPane) Update(msg tea.Msg) (serversPane, serversAction, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return p, serversNone, nil
	}
	before := p.cursor
	act := serversNone
	switch {
	case key.Matches(k, p.keys.Up):
		p.cursor--
	case key.Matches(k, p.keys.Down):
		p.cursor++
	case key.Matches(k, p.keys.Top):
		p.cursor = 0
	case key.Matches(k, p.keys.Bottom):
		p.cursor = len(p.servers)
	case key.Matches(k, p.keys.Tools), key.Matches(k, p.keys.NextPane):
		act = serversFocusTools
	case key.Matches(k, p.keys.Reconnect):
		act = serversReconnect
	case key.Matches(k, p.keys.Trust):
		act = serversTrust
	case key.Matches(k, p.keys.Info):
		act = serversInfo
	}
	p.clamp()
	if p.cursor != before {
		act = serversMoved
	}
	p.updateKeys()
	return p, act, nil
}

// rowsPer is the number of lines one server takes.
const rowsPer = 2

func (p *serversPane) clamp() {
	p.cursor = min(max(p.cursor, 0), len(p.servers))
	_, ih := common.PaneInner(p.width, p.height)
	visible := max((ih-1-1)/rowsPer, 1) // heading, the "all" row
	if p.cursor > 0 {
		i := p.cursor - 1
		if i < p.offset {
			p.offset = i
		}
		if i >= p.offset+visible {
			p.offset = i - visible + 1
		}
	}
	p.offset = min(max(p.offset, 0), max(len(p.servers)-visible, 0))
}

// want is the outer width the pane's rows need in full (borders included).
func (p serversPane) want() int {
	w := common.CellWidth("▸ all servers · " + strconv.Itoa(len(p.servers)))
	for i, s := range p.servers {
		// The widest trust badge ("? untrusted"), so that cycling trust does
		// not move the panes.
		w = max(w, 2+2+common.CellWidth(common.PlainInline(s.Name))+1+lipgloss.Width(common.TrustBadge(p.St, trust.Untrusted)))
		if s.Status == session.StatusReady {
			w = max(w, 4+min(common.CellWidth(common.PlainInline(s.Protocol)), 12)+1+lipgloss.Width(p.counts[i]))
		}
	}
	return w + 3 // borders and one column of air
}

// View renders the pane with its border; only the visible servers are drawn.
func (p serversPane) View() string {
	st := p.St
	iw, ih := common.PaneInner(p.width, p.height)
	lines := make([]string, 0, ih)
	lines = append(lines, common.PaneHeading(st, "Servers", p.focused, iw))
	all := "all servers · " + strconv.Itoa(len(p.servers))
	lines = append(lines, p.row(all, p.cursor == 0, iw))
	names := p.shownNames(iw)
	for i := p.offset; i < len(p.servers) && len(lines)+rowsPer <= ih; i++ {
		lines = append(lines, p.serverLines(i, p.cursor == i+1, iw, names[i])...)
	}
	if hidden := len(p.servers) - p.offset - (len(lines)-2)/rowsPer; hidden > 0 && len(lines) < ih {
		lines = append(lines, st.Muted.Render(common.Fit("  ↓ "+strconv.Itoa(hidden)+" more", iw)))
	}
	return common.PaneBox(st, p.focused, p.width, p.height, lines)
}

func (p serversPane) row(text string, selected bool, w int) string {
	if selected {
		return p.St.Selected.Render(common.Fit("▸ "+text, w))
	}
	return common.Fit("  "+text, w)
}

// serverLines renders one server in two lines; a "*" beside the cursor marks a
// trust changed in this session:
//
//	▸*✓ notes        ⊘ blocked
//	    2025-11-25 ○1 ◐1 ▲1
//
// name is the server's name as shownNames cut it for w.
func (p serversPane) serverLines(i int, selected bool, w int, name string) []string {
	st, s := p.St, p.servers[i]
	var status string
	switch s.Status {
	case session.StatusReady:
		status = st.OKText.Render("✓")
	case session.StatusFailed:
		status = st.ErrorText.Render("✗")
	default:
		status = st.WarnText.Render(p.frame)
	}
	badge := p.badges[i]
	cursor := "  "
	if selected {
		cursor = "▸ "
	}
	if p.changed[s.Name] {
		cursor = cursor[:len(cursor)-1] + "*"
	}
	nameW := p.nameWidth(i, w)
	first := cursor + status + " " + common.Fit(name, nameW) + " " + badge
	var second string
	switch s.Status {
	case session.StatusReady:
		second = common.OrDash(common.Inline(st, s.Protocol, 12)) + " " + p.counts[i]
		if s.Fence.Requested && !s.Fence.Applied {
			// A sandbox asked for and not applied: said before anything else.
			second = st.ErrorText.Render("⚠ UNFENCED") + " " + second
		}
		if s.InstructionsChanged {
			second = st.ErrorText.Render("⊘ instructions changed")
		}
	case session.StatusFailed:
		msg := "failed"
		if s.Err != nil {
			msg = "failed: " + s.Err.Error()
		}
		second = st.ErrorText.Render("✗ ") + common.Inline(st, msg, w-6)
	default:
		second = st.Muted.Render("connecting…")
	}
	second = "    " + second
	if selected {
		return []string{st.Selected.Render(common.Fit(first, w)), st.Selected.Render(common.Fit(second, w))}
	}
	return []string{common.Fit(first, w), common.Fit(second, w)}
}

// nameWidth is the cells server i's name gets in a row w wide: what the cursor,
// the status and the trust badge leave.
func (p serversPane) nameWidth(i, w int) int {
	return max(w-2-2-lipgloss.Width(p.badges[i])-1, 4)
}

// shownNames is every server's name cut to its row's width in w, in the middle,
// together: two names that would look alike are shown around where they differ.
func (p serversPane) shownNames(w int) []string {
	names := make([]string, len(p.servers))
	widths := make([]int, len(p.servers))
	for i, s := range p.servers {
		names[i], widths[i] = common.PlainInline(s.Name), p.nameWidth(i, w)
	}
	return common.CutDistinct(names, widths)
}

// tierCounts shows the non-zero tool counts per tier, each with its glyph.
func tierCounts(st *theme.Styles, counts [len(trust.Tiers)]int) string {
	var parts []string
	for _, t := range trust.Tiers {
		if counts[t] > 0 {
			parts = append(parts, st.Tier(t).Render(theme.TierGlyph(t)+strconv.Itoa(counts[t])))
		}
	}
	if len(parts) == 0 {
		return st.Muted.Render("no tools")
	}
	return strings.Join(parts, " ")
}
