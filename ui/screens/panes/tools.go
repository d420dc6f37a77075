package panes

import (
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/list"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// hintFilter keeps only the tools with one effective hint.
type hintFilter int

// The hint filters, in the order the hint key cycles through them.
const (
	HintAny hintFilter = iota
	hintReadOnly
	hintOpenWorld
	hintDestructive
	hintIdempotent
	hintFilters
)

func (h hintFilter) String() string {
	switch h {
	case hintReadOnly:
		return "read-only"
	case hintOpenWorld:
		return "open-world"
	case hintDestructive:
		return "destructive"
	case hintIdempotent:
		return "idempotent"
	}
	return "any"
}

// match reports whether a tool's effective hints pass the filter. destructiveHint
// only means something for a tool that is not read-only, as in the spec.
func (h hintFilter) match(e trust.Effective) bool {
	switch h {
	case hintReadOnly:
		return e.ReadOnly
	case hintOpenWorld:
		return e.OpenWorld
	case hintDestructive:
		return e.Destructive && !e.ReadOnly
	case hintIdempotent:
		return e.Idempotent
	}
	return true
}

// sortMode orders the tools pane.
type sortMode int

const (
	sortByServer sortMode = iota // the snapshot's order: server, then tool name
	sortByTier                   // most risky tier first, then server and name
)

func (s sortMode) String() string {
	if s == sortByTier {
		return "by tier"
	}
	return "by server"
}

// AnyTier is the tier filter that keeps every tier.
const AnyTier trust.Tier = -1

// ToolsPane lists the tools of the selected server (or all), filtered by text, tier
// and effective hint, sorted by server or tier. Filtering costs one pass over the
// tools when a filter or the snapshot changes; moving and drawing cost only the
// visible rows, so 10,000 tools stay fast.
type ToolsPane struct {
	*common.Common
	keys  ToolsKeyMap
	fkeys FilterKeyMap

	Tools []*model.ToolInfo // the snapshot's tools; read-only (shared between snapshots)
	// Changed holds the tools this session turned off or gave a policy, and
	// changedServers the servers whose trust it Changed (what-if).
	Changed        map[trust.Ref]bool
	ChangedServers map[string]bool
	// taskOnly marks the tools (by index) that run only as tasks (tasks.go).
	taskOnly map[int]bool
	// hay holds each tool's lower-cased searchable text; built on first use.
	hay  []string
	Rows []int // indices into tools, in display order
	// cuts holds every row's name cut for the name column, made once per
	// rows and width (cutting 10,000 names together costs 4 ms a frame).
	cuts *rowCuts
	// nameW is the name column's width for the current rows.
	nameW int
	// inScope is the number of tools of the server scope, before the filters.
	inScope int
	// tierLabels are the rendered tier labels, one per tier.
	tierLabels [len(trust.Tiers)]string

	Server string // "" for all servers
	// ScopeFailure says why the server in scope failed ("" when it did not), shown
	// in full where its tools would be.
	ScopeFailure string
	Text         string
	Tier         trust.Tier
	Hint         hintFilter
	order        sortMode

	// list.Model holds the cursor (an index into Rows, 0 when there are none)
	// and the window's offset.
	list.Model
	// Chosen is set once the person moves the cursor or acts on a tool (or airlock
	// shows them one): from then on a new snapshot keeps that tool selected. Until
	// then a cursor on the first row stays on the first row, so it does not ride
	// down with the first-ready server's tool as other servers' tools arrive.
	Chosen        bool
	input         textinput.Model
	Typing        bool
	Focused       bool
	width, height int
}

// rowCuts is the name column's cut names for one list of rows at one width.
type rowCuts struct {
	rows  []int
	width int
	names []string
}

// cutNames is every row's name cut to width, together (common.CutNames).
func (p ToolsPane) cutNames(width int) []string {
	c := p.cuts
	if c == nil {
		c = &rowCuts{}
	}
	same := len(c.rows) == len(p.Rows) && (len(p.Rows) == 0 || &c.rows[0] == &p.Rows[0])
	if !same || c.width != width || c.names == nil {
		names := make([]string, 0, len(p.Rows))
		for _, r := range p.Rows {
			names = append(names, common.PlainInline(p.Tools[r].Ref.Qualified()))
		}
		c.rows, c.width, c.names = p.Rows, width, common.CutNames(names, width)
	}
	return c.names
}

func NewToolsPane(com *common.Common) ToolsPane {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "name or description"
	in.CharLimit = 200
	p := ToolsPane{Common: com, keys: DefaultToolsKeyMap(), fkeys: DefaultFilterKeyMap(), Tier: AnyTier, input: in, Model: list.New(), cuts: &rowCuts{}}
	p.Cursor = 0
	p.Restyle()
	return p
}

// Restyle redraws the tier labels and the filter input in the current styles.
func (p *ToolsPane) Restyle() {
	st := p.St
	for _, t := range trust.Tiers {
		p.tierLabels[t] = st.Tier(t).Render(common.Fit(theme.TierLabel(t), common.TierLabelW))
	}
	p.input.SetStyles(textinput.DefaultStyles(st.Dark))
}

// SetSize sets the pane's outer size.
func (p *ToolsPane) SetSize(w, h int) {
	p.width, p.height = w, h
	iw, _ := common.PaneInner(w, h)
	p.input.SetWidth(max(iw-4, 10))
	p.Clamp()
}

// SetTools replaces the tools (a new snapshot), keeping the selected tool.
func (p *ToolsPane) SetTools(tools []*model.ToolInfo) {
	// The selection is read before the rows' indices stop meaning anything:
	// the new list may be shorter (a server reconnecting lists nothing).
	var keep trust.Ref
	if t, ok := p.SelectedTool(); ok && (p.Chosen || p.Cursor > 0) {
		keep = t.Ref
	}
	p.Rows = nil
	p.Tools = tools
	p.hay = nil
	p.taskOnly = map[int]bool{}
	for i, t := range tools {
		if t.TaskSupport == common.TaskRequired {
			p.taskOnly[i] = true
		}
	}
	p.refilterKeep(keep)
}

// SetServer scopes the pane to one server ("" for all).
func (p *ToolsPane) SetServer(name string) {
	if p.Server == name {
		return
	}
	p.Server = name
	p.Cursor, p.Chosen = 0, false
	p.SetOffset(0)
	p.Refilter()
}

// Filtered reports whether any filter (not the server scope) is active.
func (p ToolsPane) Filtered() bool {
	return p.Text != "" || p.Tier != AnyTier || p.Hint != HintAny
}

// SelectedTool returns the tool under the cursor.
func (p ToolsPane) SelectedTool() (model.ToolInfo, bool) {
	if p.Cursor < 0 || p.Cursor >= len(p.Rows) {
		return model.ToolInfo{}, false
	}
	return *p.Tools[p.Rows[p.Cursor]], true
}

// Refilter recomputes the rows from the filters, keeping the selected tool when it
// is still listed.
func (p *ToolsPane) Refilter() {
	var keep trust.Ref
	if t, ok := p.SelectedTool(); ok {
		keep = t.Ref
	}
	p.refilterKeep(keep)
}

// refilterKeep is refilter keeping the tool keep selected when it is listed.
func (p *ToolsPane) refilterKeep(keep trust.Ref) {
	needle := strings.ToLower(strings.TrimSpace(p.Text))
	if needle != "" && p.hay == nil {
		p.hay = make([]string, len(p.Tools))
		for i, t := range p.Tools {
			p.hay[i] = strings.ToLower(t.Ref.Qualified() + "\x00" + t.Title + "\x00" + t.Description)
		}
	}
	rows := make([]int, 0, len(p.Rows)+16)
	nameW, inScope := 0, 0
	for i := range p.Tools {
		t := p.Tools[i]
		if p.Server != "" && t.Ref.Server != p.Server {
			continue
		}
		inScope++
		if p.Tier != AnyTier && t.Class.Tier != p.Tier {
			continue
		}
		if !p.Hint.match(t.Class.Effective) {
			continue
		}
		if needle != "" && !strings.Contains(p.hay[i], needle) {
			continue
		}
		rows = append(rows, i)
		nameW = max(nameW, len(t.Ref.Server)+2+len(t.Ref.Tool))
	}
	if p.order == sortByTier {
		slices.SortStableFunc(rows, func(a, b int) int { return int(p.Tools[b].Class.Tier) - int(p.Tools[a].Class.Tier) })
	}
	p.Rows = rows
	p.nameW, p.inScope = nameW, inScope
	p.Cursor = 0
	if keep.Tool != "" {
		for i, r := range rows {
			if p.Tools[r].Ref == keep {
				p.Cursor = i
				break
			}
		}
	}
	p.Clamp()
	p.UpdateKeys()
}

// visibleRows is the number of tool rows that fit: the pane minus its heading and
// the filter line.
func (p ToolsPane) visibleRows() int {
	_, ih := common.PaneInner(p.width, p.height)
	return max(ih-2-len(p.fullNameLines()), 1)
}

// nameWidth is the name column's width: the longest name, within what the row
// leaves after the tier and a short description.
func (p ToolsPane) nameWidth() int {
	iw, _ := common.PaneInner(p.width, p.height)
	if p.compactTiers() {
		return min(p.nameW, max(iw-2-p.tierW()-2, 12)) // no room for descriptions
	}
	return min(p.nameW, max(iw-2-p.tierW()-1-1-12, iw*2/5, 12))
}

// compactTiers says the rows show the tier's glyph alone: on a narrow pane the
// name needs the room more than the tier's word (the glyph and colour stay).
func (p ToolsPane) compactTiers() bool {
	iw, _ := common.PaneInner(p.width, p.height)
	return iw < 44
}

// tierW is the tier column's width.
func (p ToolsPane) tierW() int {
	if p.compactTiers() {
		return 1
	}
	return common.TierLabelW
}

// fullNameLines shows the selected tool's whole name at the bottom of the pane
// when its row had to cut it: the focused name is always readable.
func (p ToolsPane) fullNameLines() []string {
	t, ok := p.SelectedTool()
	if !ok {
		return nil
	}
	name := common.PlainInline(t.Ref.Qualified())
	if common.CellWidth(name) <= p.nameWidth() {
		return nil
	}
	iw, _ := common.PaneInner(p.width, p.height)
	return common.WrapOwn(p.St.Key.Render(name), iw, p.St.Muted.Render("▸ "), "  ")
}

func (p *ToolsPane) Clamp() {
	p.Cursor = min(max(p.Cursor, 0), max(len(p.Rows)-1, 0))
	p.SetRows(len(p.Rows), nil)
	p.SetVisible(p.visibleRows())
	p.ScrollTo(0)
}

func (p *ToolsPane) UpdateKeys() {
	has := len(p.Rows) > 0
	p.keys.Open.SetEnabled(has)
	p.keys.Call.SetEnabled(has)
	p.keys.Disable.SetEnabled(has)
	p.keys.Policy.SetEnabled(has)
	p.keys.Trust.SetEnabled(has)
	p.keys.Info.SetEnabled(has || p.Server != "")
	p.keys.Up.SetEnabled(p.Cursor > 0)
	p.keys.Top.SetEnabled(p.Cursor > 0)
	p.keys.PageUp.SetEnabled(p.Cursor > 0)
	p.keys.Down.SetEnabled(p.Cursor < len(p.Rows)-1)
	p.keys.Bottom.SetEnabled(p.Cursor < len(p.Rows)-1)
	p.keys.PageDown.SetEnabled(p.Cursor < len(p.Rows)-1)
	p.keys.Clear.SetEnabled(p.Filtered())
	if t, ok := p.SelectedTool(); ok && t.Class.Tier == trust.TierBlocked {
		p.keys.Call.SetHelp("c", "call (blocked)")
	} else {
		p.keys.Call.SetHelp("c", "call")
	}
}

// ToolsAction is what a key in the tools pane asks the root to do.
type ToolsAction int

const (
	toolsNone ToolsAction = iota
	ToolsOpen
	ToolsCall
	ToolsFocusServers
	ToolsDisable
	ToolsPolicy
	ToolsTrust
	ToolsInfo
)

// Update handles a key or, while the text filter takes input, the input's messages.
func (p ToolsPane) Update(msg tea.Msg) (ToolsPane, ToolsAction, tea.Cmd) {
	if p.Typing {
		return p.updateTyping(msg)
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return p, toolsNone, nil
	}
	act := toolsNone
	var cmd tea.Cmd
	if !key.Matches(k, p.keys.NextPane) {
		p.Chosen = true
	}
	p.Keys = p.keys.ScrollKeyMap
	p.SetRows(len(p.Rows), nil)
	p.SetVisible(p.visibleRows())
	switch {
	case p.Model.Update(k):
	case key.Matches(k, p.keys.Open):
		act = ToolsOpen
	case key.Matches(k, p.keys.Call):
		act = ToolsCall
	case key.Matches(k, p.keys.NextPane):
		act = ToolsFocusServers
	case key.Matches(k, p.keys.Disable):
		act = ToolsDisable
	case key.Matches(k, p.keys.Policy):
		act = ToolsPolicy
	case key.Matches(k, p.keys.Trust):
		act = ToolsTrust
	case key.Matches(k, p.keys.Info):
		act = ToolsInfo
	case key.Matches(k, p.keys.Filter):
		p.Typing = true
		p.input.SetValue(p.Text)
		p.input.CursorEnd()
		cmd = p.input.Focus()
	case key.Matches(k, p.keys.Tier):
		p.Tier++
		if int(p.Tier) >= len(trust.Tiers) {
			p.Tier = AnyTier
		}
		p.Refilter()
	case key.Matches(k, p.keys.Hint):
		p.Hint = (p.Hint + 1) % hintFilters
		p.Refilter()
	case key.Matches(k, p.keys.Sort):
		p.order = 1 - p.order
		p.Refilter()
	case key.Matches(k, p.keys.Clear):
		p.Text, p.Tier, p.Hint = "", AnyTier, HintAny
		p.Refilter()
	}
	p.Clamp()
	p.UpdateKeys()
	return p, act, cmd
}

func (p ToolsPane) updateTyping(msg tea.Msg) (ToolsPane, ToolsAction, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, p.fkeys.Apply):
			p.Typing = false
			p.input.Blur()
			return p, toolsNone, nil
		case key.Matches(k, p.fkeys.Cancel):
			p.Typing = false
			p.input.Blur()
			p.input.SetValue("")
			p.Text = ""
			p.Refilter()
			return p, toolsNone, nil
		}
	}
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(msg)
	if v := p.input.Value(); v != p.Text {
		p.Text = v
		p.Refilter()
	}
	return p, toolsNone, cmd
}

// KeyMap returns the bindings that apply now, for the footer.
func (p ToolsPane) KeyMap() common.KeyMapFunc {
	if p.Typing {
		return common.KeyMapFunc{Short: p.fkeys.ShortHelp(), Full: p.fkeys.FullHelp()}
	}
	return common.KeyMapFunc{Short: p.keys.ShortHelp(), Full: p.keys.FullHelp()}
}

// View renders the pane with its border; only the visible rows are drawn.
func (p ToolsPane) View() string {
	st := p.St
	iw, ih := common.PaneInner(p.width, p.height)
	lines := make([]string, 0, ih)
	scope := "all servers"
	if p.Server != "" {
		scope = p.Server
	}
	head := "Tools · " + scope + " · " + strconv.Itoa(len(p.Rows)) + " of " + strconv.Itoa(p.inScope) + " · " + p.order.String()
	lines = append(lines, common.PaneHeading(st, head, p.Focused, iw))
	lines = append(lines, p.filterLine(iw))
	if len(p.Rows) == 0 && p.ScopeFailure != "" && !p.Filtered() {
		lines = append(lines, st.ErrorText.Render("✗ "+common.Inline(st, p.Server, 32)+" failed:"))
		lines = append(lines, common.BlockLines(st, p.ScopeFailure, iw, 4<<10, st.Gutter.Render(common.Gutter))...)
		lines = append(lines, "", st.Muted.Render(common.Fit("r (servers pane) connects it again · l shows logs", iw)))
	} else if len(p.Rows) == 0 {
		msg := "no tools yet"
		if p.Filtered() {
			msg = "no tool matches the filters (esc clears them)"
		} else if len(p.Tools) > 0 {
			msg = "this server lists no tools"
		}
		lines = append(lines, st.Muted.Render(common.Fit("  "+msg, iw)))
	}
	offset := p.Offset()
	end := min(offset+p.visibleRows(), len(p.Rows))
	nameW := p.nameWidth()
	// The names of every row are cut together, so that no two look the same,
	// on screen or scrolled away (a cut on screen could otherwise be read as
	// the name of a row out of view).
	names := p.cutNames(nameW)
	for i := offset; i < end; i++ {
		lines = append(lines, p.rowView(p.Tools[p.Rows[i]], p.taskOnly[p.Rows[i]], names[i], i == p.Cursor, iw, nameW))
	}
	if full := p.fullNameLines(); len(full) > 0 {
		for len(lines) < ih-len(full) {
			lines = append(lines, "")
		}
		lines = append(lines[:ih-len(full)], full...)
	}
	return common.PaneBox(st, p.Focused, p.width, p.height, lines)
}

func (p ToolsPane) filterLine(w int) string {
	st := p.St
	if p.Typing {
		return common.Fit(p.input.View(), w)
	}
	if !p.Filtered() {
		return st.Muted.Render(common.Fit("  filters: none  (/ text · t tier · h hint)", w))
	}
	var parts []string
	if p.Text != "" {
		parts = append(parts, "text “"+common.Inline(st, p.Text, 24)+"”")
	}
	if p.Tier != AnyTier {
		parts = append(parts, "tier "+st.Tier(p.Tier).Render(theme.TierLabel(p.Tier)))
	}
	if p.Hint != HintAny {
		parts = append(parts, "hint "+p.Hint.String())
	}
	return common.Fit(st.WarnText.Render("  ⧩ ")+strings.Join(parts, " · ")+st.Muted.Render("  (esc clears)"), w)
}

// rowView renders one tool: cursor, tier glyph and word in the tier's colour, the
// qualified name and the first line of the description. A "*" beside the cursor
// marks a tool this session turned off or gave a policy, or whose server's trust
// it changed.
func (p ToolsPane) rowView(t *model.ToolInfo, taskOnly bool, cut string, selected bool, w, nameW int) string {
	st := p.St
	cursor := "  "
	if selected {
		cursor = "▸ "
	}
	if p.Changed[t.Ref] || p.ChangedServers[t.Ref.Server] {
		cursor = cursor[:len(cursor)-1] + "*"
	}
	name := common.Fit(cut, nameW)
	descW := w - 2 - p.tierW() - 1 - nameW - 1
	var desc string
	if descW > 3 {
		s, more := common.Summary(t.Description)
		if t.Title != "" && s == "" {
			s = t.Title
		}
		if more {
			s += " " + common.Ellipsis
		}
		if taskOnly {
			// A task-only tool cannot be called from airlock: say so first.
			const mark = "⧗ task only · "
			if descW <= common.CellWidth(mark)+3 || s == "" {
				desc = common.Fit(mark, descW)
			} else {
				desc = mark + common.Inline(st, s, descW-common.CellWidth(mark))
			}
		} else {
			desc = common.Inline(st, s, descW)
		}
	}
	if selected {
		label := common.Fit(theme.TierLabel(t.Class.Tier), common.TierLabelW)
		if p.compactTiers() {
			label = theme.TierGlyph(t.Class.Tier)
		}
		return st.Selected.Render(common.Fit(cursor+label+" "+name+" "+desc, w))
	}
	if p.compactTiers() {
		return cursor + st.Tier(t.Class.Tier).Render(theme.TierGlyph(t.Class.Tier)) + " " + name + " " + st.Muted.Render(desc)
	}
	return cursor + p.tierLabels[t.Class.Tier] + " " + name + " " + st.Muted.Render(desc)
}
