// Package panes is the main screen's two panes: the servers (status, trust, tool
// counts) and the tools of the selected server or of all (tier, legs, filters by
// text, tier and hint, sorting). A key asks the root to open, call, reconnect or
// change something for this session (an action); the root gives the panes each
// new snapshot and which pane has focus.
package panes

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/list"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// ServersPane lists the servers with their connection state, trust, protocol and
// tool counts per tier. Row 0 is "all servers"; the selected row scopes the tools
// pane.
type ServersPane struct {
	*common.Common
	Keys    ServersKeyMap
	Servers []model.ServerInfo
	// counts and badges are each server's rendered tier counts and trust badge,
	// kept with the list: styling them on every frame is most of a frame's cost.
	counts, badges []string
	// Changed holds the servers whose trust this session Changed (what-if).
	Changed map[string]bool
	// list.Model's Cursor is the selected row, 0: all servers, i+1:
	// Servers[i]; its offset is the first visible server (rows after the first).
	list.Model
	Focused bool
	// Frame is the spinner Frame shown beside a connecting server.
	Frame         string
	width, height int
}

func NewServersPane(com *common.Common) ServersPane {
	p := ServersPane{Common: com, Keys: DefaultServersKeyMap(), Frame: "◌", Model: list.New()}
	p.Cursor = 0
	return p
}

// SetSize sets the pane's outer size.
func (p *ServersPane) SetSize(w, h int) {
	p.width, p.height = w, h
	p.clamp()
}

// SetServers replaces the server list, keeping the selected server by name.
func (p *ServersPane) SetServers(servers []model.ServerInfo) {
	sel := p.Selected()
	p.Servers = servers
	p.Restyle()
	p.Cursor = 0
	p.SetRows(len(servers)+1, nil)
	p.Keep(sel, func(i int) string {
		if i == 0 {
			return "\x00" // the all-servers row: found by the cursor's 0
		}
		return servers[i-1].Name
	})
	p.clamp()
	p.UpdateKeys()
}

// Restyle renders the per-server pieces that only change with the list or theme.
func (p *ServersPane) Restyle() {
	p.counts = make([]string, len(p.Servers))
	p.badges = make([]string, len(p.Servers))
	for i, s := range p.Servers {
		p.counts[i] = tierCounts(p.St, s.Tiers)
		p.badges[i] = common.TrustBadge(p.St, s.Trust)
	}
}

// Selected returns the Selected server's name, "" for all servers.
func (p ServersPane) Selected() string {
	if p.Cursor == 0 || p.Cursor > len(p.Servers) {
		return ""
	}
	return p.Servers[p.Cursor-1].Name
}

func (p ServersPane) SelectedInfo() (model.ServerInfo, bool) {
	if p.Cursor == 0 || p.Cursor > len(p.Servers) {
		return model.ServerInfo{}, false
	}
	return p.Servers[p.Cursor-1], true
}

// UpdateKeys enables the bindings that make sense for the selection.
func (p *ServersPane) UpdateKeys() {
	s, ok := p.SelectedInfo()
	p.Keys.Reconnect.SetEnabled(ok && s.Status != model.StatusConnecting)
	p.Keys.Trust.SetEnabled(ok)
	p.Keys.Info.SetEnabled(ok)
	if ok && s.Status == model.StatusFailed {
		p.Keys.Reconnect.SetHelp("r", "reconnect "+s.Name)
	} else {
		p.Keys.Reconnect.SetHelp("r", "reconnect")
	}
	n := len(p.Servers)
	p.Keys.Up.SetEnabled(p.Cursor > 0)
	p.Keys.Down.SetEnabled(p.Cursor < n)
	p.Keys.Top.SetEnabled(p.Cursor > 0)
	p.Keys.Bottom.SetEnabled(p.Cursor < n)
}

// ServersAction is what a key in the servers pane asks the root to do.
type ServersAction int

const (
	serversNone ServersAction = iota
	ServersMoved
	ServersFocusTools
	ServersReconnect
	ServersTrust
	ServersInfo
)

// Update handles a key; the root routes keys here only while the pane has focus.
func (p ServersPane) Update(msg tea.Msg) (ServersPane, ServersAction, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return p, serversNone, nil
	}
	before := p.Cursor
	act := serversNone
	p.Model.Keys = common.ScrollKeyMap{Up: p.Keys.Up, Down: p.Keys.Down, Top: p.Keys.Top, Bottom: p.Keys.Bottom}
	p.SetRows(len(p.Servers)+1, nil)
	switch {
	case p.Model.Update(k):
	case key.Matches(k, p.Keys.Tools), key.Matches(k, p.Keys.NextPane):
		act = ServersFocusTools
	case key.Matches(k, p.Keys.Reconnect):
		act = ServersReconnect
	case key.Matches(k, p.Keys.Trust):
		act = ServersTrust
	case key.Matches(k, p.Keys.Info):
		act = ServersInfo
	}
	p.clamp()
	if p.Cursor != before {
		act = ServersMoved
	}
	p.UpdateKeys()
	return p, act, nil
}

// rowsPer is the number of lines one server takes.
const rowsPer = 2

func (p *ServersPane) clamp() {
	p.Cursor = min(max(p.Cursor, 0), len(p.Servers))
	_, ih := common.PaneInner(p.width, p.height)
	visible := max((ih-1-1)/rowsPer, 1) // heading, the "all" row
	// The window is over the servers, below the all-servers row.
	p.SetOffset(list.ScrollTo(p.Offset(), p.Cursor-1, 0, visible, len(p.Servers), 0))
}

// Want is the outer width the pane's rows need in full (borders included).
func (p ServersPane) Want() int {
	w := common.CellWidth("▸ all servers · " + strconv.Itoa(len(p.Servers)))
	for i, s := range p.Servers {
		// The widest trust badge ("? untrusted"), so that cycling trust does
		// not move the panes.
		w = max(w, 2+2+common.CellWidth(common.PlainInline(s.Name))+1+lipgloss.Width(common.TrustBadge(p.St, trust.Untrusted)))
		if s.Status == model.StatusReady {
			w = max(w, 4+min(common.CellWidth(common.PlainInline(s.Protocol)), 12)+1+lipgloss.Width(p.counts[i]))
		}
	}
	return w + 3 // borders and one column of air
}

// View renders the pane with its border; only the visible servers are drawn.
func (p ServersPane) View() string {
	st := p.St
	iw, ih := common.PaneInner(p.width, p.height)
	lines := make([]string, 0, ih)
	lines = append(lines, common.PaneHeading(st, "Servers", p.Focused, iw))
	all := "all servers · " + strconv.Itoa(len(p.Servers))
	lines = append(lines, p.row(all, p.Cursor == 0, iw))
	names := p.ShownNames(iw)
	for i := p.Offset(); i < len(p.Servers) && len(lines)+rowsPer <= ih; i++ {
		lines = append(lines, p.ServerLines(i, p.Cursor == i+1, iw, names[i])...)
	}
	if hidden := len(p.Servers) - p.Offset() - (len(lines)-2)/rowsPer; hidden > 0 && len(lines) < ih {
		lines = append(lines, st.Muted.Render(common.Fit("  ↓ "+strconv.Itoa(hidden)+" more", iw)))
	}
	return common.PaneBox(st, p.Focused, p.width, p.height, lines)
}

func (p ServersPane) row(text string, selected bool, w int) string {
	if selected {
		return p.St.Selected.Render(common.Fit("▸ "+text, w))
	}
	return common.Fit("  "+text, w)
}

// ServerLines renders one server in two lines; a "*" beside the cursor marks a
// trust changed in this session:
//
//	▸*✓ notes        ⊘ blocked
//	    2025-11-25 ○1 ◐1 ▲1
//
// name is the server's name as shownNames cut it for w.
func (p ServersPane) ServerLines(i int, selected bool, w int, name string) []string {
	st, s := p.St, p.Servers[i]
	var status string
	switch s.Status {
	case model.StatusReady:
		status = st.OKText.Render("✓")
	case model.StatusFailed:
		status = st.ErrorText.Render("✗")
	default:
		status = st.WarnText.Render(p.Frame)
	}
	badge := p.badges[i]
	cursor := "  "
	if selected {
		cursor = "▸ "
	}
	if p.Changed[s.Name] {
		cursor = cursor[:len(cursor)-1] + "*"
	}
	nameW := p.nameWidth(i, w)
	first := cursor + status + " " + common.Fit(name, nameW) + " " + badge
	var second string
	switch s.Status {
	case model.StatusReady:
		second = common.OrDash(common.Inline(st, s.Protocol, 12)) + " " + p.counts[i]
		if s.Fence.Requested && !s.Fence.Applied {
			// A sandbox asked for and not applied: said before anything else.
			second = st.ErrorText.Render("⚠ UNFENCED") + " " + second
		}
		if s.InstructionsChanged {
			second = st.ErrorText.Render("⊘ instructions changed")
		}
	case model.StatusFailed:
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
func (p ServersPane) nameWidth(i, w int) int {
	return max(w-2-2-lipgloss.Width(p.badges[i])-1, 4)
}

// ShownNames is every server's name cut to its row's width in w, in the middle,
// together: two names that would look alike are shown around where they differ.
func (p ServersPane) ShownNames(w int) []string {
	names := make([]string, len(p.Servers))
	widths := make([]int, len(p.Servers))
	for i, s := range p.Servers {
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

// ServersKeyMap holds the keys of the servers pane.
type ServersKeyMap struct {
	Up        key.Binding
	Down      key.Binding
	Top       key.Binding
	Bottom    key.Binding
	Tools     key.Binding
	NextPane  key.Binding
	Reconnect key.Binding
	// Trust cycles the selected server's trust for this session (what-if):
	// trusted → untrusted → blocked → trusted.
	Trust key.Binding
	// Info opens the selected server's info view (and from it its resources
	// and prompts).
	Info key.Binding
}

// DefaultServersKeyMap returns the servers pane's keys.
func DefaultServersKeyMap() ServersKeyMap {
	return ServersKeyMap{
		Up:        key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:      key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Top:       key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		Bottom:    key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),
		Tools:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "its tools")),
		NextPane:  key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "tools pane")),
		Reconnect: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reconnect")),
		Trust:     key.NewBinding(key.WithKeys("T"), key.WithHelp("T", "cycle trust (what-if)")),
		Info:      key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "server info, resources, prompts")),
	}
}

// ShortHelp implements help.KeyMap.
func (k ServersKeyMap) ShortHelp() []key.Binding {
	short := k.Trust
	short.SetHelp("T", "trust")
	info := k.Info
	info.SetHelp("i", "info")
	return []key.Binding{k.Up, k.Down, info, k.Tools, k.Reconnect, short, k.NextPane}
}

// FullHelp implements help.KeyMap.
func (k ServersKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Top, k.Bottom}, {k.Tools, k.Info, k.NextPane, k.Reconnect, k.Trust}}
}

// ToolsKeyMap holds the keys of the tools pane.
type ToolsKeyMap struct {
	common.ScrollKeyMap // moves between the rows
	Open                key.Binding
	Call                key.Binding
	Filter              key.Binding
	Tier                key.Binding
	Hint                key.Binding
	Sort                key.Binding
	Clear               key.Binding
	NextPane            key.Binding
	// Disable, Policy and Trust are the what-if changes of the selected tool:
	// off for this session, its policy override, its server's trust.
	Disable key.Binding
	Policy  key.Binding
	Trust   key.Binding
	// Info opens the info view of the selected tool's server.
	Info key.Binding
}

// DefaultToolsKeyMap returns the tools pane's keys.
func DefaultToolsKeyMap() ToolsKeyMap {
	return ToolsKeyMap{
		ScrollKeyMap: common.RowScrollKeyMap("up", "down"),
		Open:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details")),
		Call:         key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "call")),
		Filter:       key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Tier:         key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "tier filter")),
		Hint:         key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "hint filter")),
		Sort:         key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		Clear:        key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filters")),
		NextPane:     key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "servers pane")),
		Disable:      key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "turn off / on for this session")),
		Policy:       key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "policy: none → ask → deny (what-if)")),
		Trust:        key.NewBinding(key.WithKeys("T"), key.WithHelp("T", "cycle its server's trust (what-if)")),
		Info:         key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "its server: info, resources, prompts")),
	}
}

// ShortHelp implements help.KeyMap. The footer's words are shorter than the help
// overlay's, so that the line fits 80 columns.
func (k ToolsKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{common.ShortKey(k.Open, "open"), k.Call, k.Filter, common.ShortKey(k.Info, "info"), common.ShortKey(k.Clear, "clear"), common.ShortKey(k.NextPane, "pane")}
}

// FullHelp implements help.KeyMap.
func (k ToolsKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		k.Column(),
		{k.Open, k.Call, k.Info, k.NextPane},
		{k.Filter, k.Tier, k.Hint, k.Sort, k.Clear},
		{k.Disable, k.Policy, k.Trust},
	}
}

// FilterKeyMap holds the keys while the text filter takes input.
type FilterKeyMap struct {
	Apply  key.Binding
	Cancel key.Binding
}

// DefaultFilterKeyMap returns the text filter's keys.
func DefaultFilterKeyMap() FilterKeyMap {
	return FilterKeyMap{
		Apply:  key.NewBinding(key.WithKeys("enter", "down", "up"), key.WithHelp("enter", "keep filter")),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear text")),
	}
}

// ShortHelp implements help.KeyMap.
func (k FilterKeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Apply, k.Cancel} }

// FullHelp implements help.KeyMap.
func (k FilterKeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{{k.Apply, k.Cancel}} }
