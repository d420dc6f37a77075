// Package hazards is the hazards screen (z) and the risk banner's words: every
// hazard of the toolset with the tools of each leg, where a tool can be turned off,
// given a policy or have its server's trust changed for this session (what-if).
// A key asks the root for the change (the intents Disable, Policy, Trust,
// OpenTool, through the screen interface); the root
// makes it through the session and hands the new snapshot back (SetData).
package hazards

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/list"
	"github.com/airlock-mcp/airlock/ui/screen"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// maxLegRows bounds the tool rows one leg lists; the rest are counted. A leg can
// hold thousands of tools in a large session, and the tools pane filters them.
const maxLegRows = 200

// hzLine is one line of the hazards view: airlock's own text, or a tool or a
// server the person can act on.
type hzLine struct {
	Text   string    // rendered, escaped; without the cursor column
	Ref    trust.Ref // a tool row when ref.Tool != ""
	server string    // a server row (the changes section) when not ""
}

func (l hzLine) selectable() bool { return l.Ref.Tool != "" || l.server != "" }

// key identifies what a row is about, to keep the cursor on it across rebuilds.
func (l hzLine) key() string {
	if l.Ref.Tool != "" {
		return "t\x00" + l.Ref.Server + "\x00" + l.Ref.Tool
	}
	if l.server != "" {
		return "s\x00" + l.server
	}
	return ""
}

// Model lists every hazard of the toolset: its severity, whether it is
// guarded, its summary and, per leg, the concrete tools with their tier and
// trust. Below the hazards it lists the person's what-if changes, so that a tool
// that left every hazard (because it was turned off) can be turned back on. The
// person moves between tool rows and acts on them; the root carries the action
// out through the session and hands the view the new snapshot.
type Model struct {
	*common.Common
	keys KeyMap

	snap   *model.Snapshot
	over   model.Overrides
	config map[string]trust.ServerTrust // each server's trust in the config

	Lines []hzLine
	list  list.Model // over Lines; the cursor is on a selectable line, -1 when none
	// Dirty says the snapshot changed since lines were built; the lines are built
	// only while the view is shown.
	Dirty bool

	width, height int
}

func New(com *common.Common) Model {
	v := Model{Common: com, keys: DefaultKeyMap(), list: list.New()}
	v.list.Keys = v.keys.ScrollKeyMap
	return v
}

// SetSize sets the outer size; the lines are wrapped again for the new width.
func (v *Model) SetSize(w, h int) {
	v.width, v.height = w, h
	v.list.SetVisible(v.visible())
	v.Dirty = true
}

// SetData takes a new snapshot and the live changes; the lines are rebuilt when
// next shown.
func (v *Model) SetData(s *model.Snapshot, over model.Overrides, config map[string]trust.ServerTrust) {
	v.snap, v.over, v.config = s, over, config
	v.Dirty = true
}

// Open shows the view from its first tool row.
func (v *Model) Open() {
	v.list.Cursor = -1
	v.list.SetOffset(0)
	v.rebuild()
}

// Refresh rebuilds the lines if anything changed, keeping the cursor on the
// same tool or server where it is still listed.
func (v *Model) Refresh() {
	if v.Dirty {
		v.rebuild()
	}
}

// Selected returns the tool (ref.Tool != "") or the server under the cursor.
func (v Model) Selected() (trust.Ref, string) {
	c := v.list.Cursor
	if c < 0 || c >= len(v.Lines) {
		return trust.Ref{}, ""
	}
	l := v.Lines[c]
	if l.Ref.Tool != "" {
		return l.Ref, l.Ref.Server
	}
	return trust.Ref{}, l.server
}

func (v *Model) rebuild() {
	v.Dirty = false
	if v.snap == nil {
		return
	}
	st := v.St
	iw, _ := common.PaneInner(v.width, v.height)
	keep, keepAt := "", v.list.Cursor
	if keepAt >= 0 && keepAt < len(v.Lines) {
		keep = v.Lines[keepAt].key()
	}
	var ls []hzLine
	add := func(texts ...string) {
		for _, t := range texts {
			ls = append(ls, hzLine{Text: t})
		}
	}
	nameW := v.nameWidth(iw)
	shown := v.shownNames(nameW)
	if len(v.snap.Hazards) == 0 {
		add(st.OKText.Render("✓ no toolset hazards") + st.Muted.Render(": no untrusted source reaches a tool that sends data out or destroys it"))
	}
	for i, h := range v.snap.Hazards {
		if i > 0 {
			add("")
		}
		style := st.Banner
		if h.Severity == trust.SeverityCritical {
			style = st.BannerCrit
		}
		guard := st.OKText.Render("✓ guarded") + st.Muted.Render(strings.TrimPrefix(trust.GuardedMeaning, "guarded"))
		if h.Unguarded {
			guard = st.ErrorText.Render("✗ UNGUARDED") + st.Muted.Render(strings.TrimPrefix(trust.UnguardedMeaning, "UNGUARDED"))
		}
		add(style.Render(theme.SeverityGlyph(h.Severity)+" "+string(h.Severity)+" · "+hazardTitle(h.Kind)) + "  " + guard)
		add(common.WrapOwn(common.StyledInline(h.Summary, common.MarkFn(st)), iw-2, "  ", "  ")...)
		for _, leg := range legOrder(h) {
			names := h.Legs[leg]
			add("  " + st.Key.Render(leg) + st.Muted.Render(" · "+trust.CountMembers(names)))
			rows := names[:min(len(names), maxLegRows)]
			notes := make([]string, len(rows))
			for j, q := range rows {
				notes[j] = legNote(v.snap, q, leg)
			}
			for j, q := range rows {
				ls = append(ls, v.toolLine(q, shown[q], nameW, iw))
				note := notes[j]
				if note == "" || j > 0 && notes[j-1] == note {
					continue // said once for a run of rows it is true of
				}
				same := 0
				for k := j + 1; k < len(notes) && notes[k] == note; k++ {
					same++
				}
				text := common.Inline(st, note, 400)
				if same > 0 {
					text += st.Muted.Render(" (so for the " + strconv.Itoa(same) + " below too)")
				}
				add(common.WrapOwn(st.Muted.Render("↳ ")+text, iw-2, "      ", "        ")...)
			}
			if len(names) > maxLegRows {
				add(st.Muted.Render("      … " + strconv.Itoa(len(names)-maxLegRows) + " more (the tools pane lists them all)"))
			}
		}
	}
	// Every sandbox asked for, applied or not: a server whose fence took it out of
	// every hazard is listed here, and an unfenced one is a warning.
	fenced := false
	for _, sv := range v.snap.Servers {
		if !sv.Fence.Requested {
			continue
		}
		if !fenced {
			add("", st.Header.Render("Sandboxes")+st.Muted.Render(" · a server fenced with no network cannot send data out"))
			fenced = true
		}
		add(common.WrapOwn(common.Fit(common.Inline(st, sv.Name, nameW), nameW)+" "+FenceText(st, sv.Fence), iw-2, "  ", strings.Repeat(" ", nameW+3))...)
	}
	if n := OverrideCount(v.over); n > 0 {
		add("", st.Header.Render("* Changed in this session · "+strconv.Itoa(n)+" unsaved")+st.Muted.Render(" · E writes them as a TOML fragment"))
		servers := make([]string, 0, len(v.over.Trust))
		for s := range v.over.Trust {
			servers = append(servers, s)
		}
		sort.Strings(servers)
		for _, s := range servers {
			t := v.over.Trust[s]
			text := st.WarnText.Render("* ") + common.Fit(common.Inline(st, s, nameW), nameW) + " server trust " + common.TrustBadge(st, t) +
				st.Muted.Render(" (config: "+v.config[s].String()+")")
			ls = append(ls, hzLine{Text: common.Fit(text, iw-4), server: s})
		}
		var refs []trust.Ref
		for r := range v.over.Policy {
			refs = append(refs, r)
		}
		for r, off := range v.over.Disabled {
			if off && !slices.Contains(refs, r) {
				refs = append(refs, r)
			}
		}
		slices.SortFunc(refs, func(a, b trust.Ref) int { return strings.Compare(a.Qualified(), b.Qualified()) })
		for _, r := range refs {
			ls = append(ls, v.toolLine(r.Qualified(), shown[r.Qualified()], nameW, iw))
		}
		for _, name := range slices.Sorted(maps.Keys(v.over.RulesOff)) {
			text := st.WarnText.Render("* ") + "rule " + common.Inline(st, name, max(iw/2, 16)) + st.Muted.Render(" off for "+common.Inline(st, v.over.RulesOff[name].Qualified(), 40)+" (K: turn it on)")
			ls = append(ls, hzLine{Text: common.Fit(text, iw-4)})
		}
	}
	v.Lines = ls
	v.list.SetRows(len(ls), func(i int) bool { return ls[i].selectable() })
	v.list.Cursor = -1
	if keep != "" {
		for i, l := range ls {
			if l.key() == keep {
				v.list.Cursor = i
				break
			}
		}
	}
	if v.list.Cursor < 0 {
		// The row left (its hazard is gone): the nearest row at or after where it was.
		v.list.Cursor = v.list.Next(max(keepAt, 0), 1)
		if v.list.Cursor < 0 {
			v.list.Cursor = v.list.Last()
		}
	}
	v.clamp()
	v.updateKeys()
}

// legOrder lists a hazard's legs in the banner's order, then any other leg.
func legOrder(h trust.Hazard) []string {
	order := hazardLegs(h.Kind)
	var rest []string
	for l := range h.Legs {
		if !slices.Contains(order, l) {
			rest = append(rest, l)
		}
	}
	sort.Strings(rest)
	out := make([]string, 0, len(order)+len(rest))
	for _, l := range append(order, rest...) {
		if _, ok := h.Legs[l]; ok {
			out = append(out, l)
		}
	}
	return out
}

// nameWidth is the name column's width: the longest name listed, within bounds.
func (v Model) nameWidth(iw int) int {
	w := 8
	for _, h := range v.snap.Hazards {
		for _, names := range h.Legs {
			for _, n := range names[:min(len(names), maxLegRows)] {
				w = max(w, len(trust.LegName(n)))
			}
		}
	}
	for r := range v.over.Policy {
		w = max(w, len(r.Qualified()))
	}
	for r := range v.over.Disabled {
		w = max(w, len(r.Qualified()))
	}
	if narrow(iw) {
		// No trust column: the name takes what the tier and policy leave.
		return min(w, max(iw-4-2-common.TierLabelW-1-5-2, 12))
	}
	return min(w, max(iw*2/5, 12))
}

// narrow says a pane of inner width iw leaves the trust column out of the tool
// rows (it is on the server's row, and in the note of an untrusted server's tool),
// so that the names are cut less.
func narrow(iw int) bool { return iw < 70 }

// shownNames is every tool name the view lists (a leg's rows and the changed
// tools), cut to nameW together as the tools pane cuts them: in the middle,
// keeping the tail, and so that no two different names look the same.
func (v Model) shownNames(nameW int) map[string]string {
	var qs []string
	for _, h := range v.snap.Hazards {
		for _, names := range h.Legs {
			qs = append(qs, names[:min(len(names), maxLegRows)]...)
		}
	}
	for r := range v.over.Policy {
		qs = append(qs, r.Qualified())
	}
	for r := range v.over.Disabled {
		qs = append(qs, r.Qualified())
	}
	slices.Sort(qs)
	qs = slices.Compact(qs) // a tool in two legs is one name
	shown := make([]string, len(qs))
	for i, q := range qs {
		shown[i] = common.PlainInline(trust.LegName(q))
	}
	shown = common.CutNames(shown, nameW)
	out := make(map[string]string, len(qs))
	for i, q := range qs {
		out[q] = shown[i]
	}
	return out
}

// toolLine renders one tool of a leg: a change mark, its name (as shownNames
// cut it), its tier, its server's trust and what this session changed about it.
func (v Model) toolLine(qualified, shown string, nameW, iw int) hzLine {
	st := v.St
	server, tool, _ := strings.Cut(qualified, "__")
	ref := trust.Ref{Server: server, Tool: tool}
	t, ok := v.snap.Tool(server, tool)
	mark := "  "
	var change []string
	if v.over.Disabled[ref] {
		change = append(change, "off for this session")
	}
	if a, ok := v.over.Policy[ref]; ok {
		change = append(change, "policy "+a.String())
	}
	if tr, ok := v.over.Trust[server]; ok {
		change = append(change, "server "+tr.String())
	}
	if len(change) > 0 {
		mark = st.WarnText.Render("* ")
	}
	kind, channel := trust.ChannelOf(tool)
	// A channel's row on a narrow pane is not held to the columns: what it lists
	// is what a reader needs there, and it is cut last.
	loose := channel && narrow(iw)
	if loose {
		text := mark + shown
		if c, ok := v.snap.Channel(server, kind); ok {
			text += " " + st.Tier(c.Class.Tier).Render(theme.TierLabel(c.Class.Tier)) + " " + policyWord(st, c.Class.Action)
			if sv, ok := v.snap.Server(server); ok {
				text += " " + st.Muted.Render(listed(sv, kind))
			}
		}
		return hzLine{Text: common.Fit(text, iw-4), Ref: ref}
	}
	text := mark + common.Fit(shown, nameW)
	if channel {
		t, ok = v.snap.Channel(server, kind)
	}
	if ok {
		text += " " + st.Tier(t.Class.Tier).Render(common.Fit(theme.TierLabel(t.Class.Tier), common.TierLabelW)) + " " + policyWord(st, t.Class.Action)
		if channel {
			// What the channel lists before the trust badge: at 60 columns it is
			// what a reader needs, the server's trust is on the server's row.
			if sv, ok := v.snap.Server(server); ok {
				text += " " + st.Muted.Render(listed(sv, kind)+" ·")
			}
		}
		if !narrow(iw) {
			text += " " + common.TrustBadge(st, t.ServerTrust)
		}
		if f := t.ServerFence(); f.Requested && !f.Applied {
			text += " " + st.ErrorText.Render(trust.FenceColumn(f))
		} else if f.Requested {
			text += " " + st.OKText.Render(trust.FenceColumn(f))
		}
	} else {
		text += " " + st.Muted.Render("(not listed now)")
	}
	if len(change) > 0 {
		text += st.WarnText.Render("  * " + strings.Join(change, ", "))
	}
	return hzLine{Text: common.Fit(text, iw-4), Ref: ref}
}

// visible is the number of lines between the heading and the line that counts
// what is below.
func (v Model) visible() int {
	_, ih := common.PaneInner(v.width, v.height)
	return max(ih-2, 1)
}

// clamp keeps the cursor visible, and shows the headings above it when they fit.
func (v *Model) clamp() {
	n, cursor, offset := v.visible(), v.list.Cursor, v.list.Offset()
	if cursor >= 0 {
		if cursor < offset {
			offset = cursor
		}
		if cursor >= offset+n {
			offset = cursor - n + 1
		}
		for offset > 0 && !v.Lines[offset-1].selectable() && cursor-(offset-1) < n {
			offset--
		}
		if cursor == v.list.First() {
			offset = max(0, min(offset, cursor-n+1))
		}
	}
	v.list.SetOffset(min(max(offset, 0), max(len(v.Lines)-n, 0)))
}

func (v *Model) updateKeys() {
	ref, server := v.Selected()
	tool := ref.Tool != ""
	first, last, cursor, offset := v.list.First(), v.list.Last(), v.list.Cursor, v.list.Offset()
	v.keys.Disable.SetEnabled(tool)
	v.keys.Policy.SetEnabled(tool)
	v.keys.Open.SetEnabled(tool)
	v.keys.Trust.SetEnabled(server != "")
	v.keys.Up.SetEnabled(cursor > first)
	v.keys.Top.SetEnabled(cursor > first)
	v.keys.PageUp.SetEnabled(offset > 0 || cursor > first)
	v.keys.Down.SetEnabled(cursor >= 0 && cursor < last)
	v.keys.Bottom.SetEnabled(cursor >= 0 && cursor < last)
	v.keys.PageDown.SetEnabled(offset+v.visible() < len(v.Lines) || cursor < last)
}

// OpenTool asks the root to show the tool's details.
type OpenTool struct{ Ref trust.Ref }

// Disable asks the root to turn the tool off, or on again, for this session.
type Disable struct{ Ref trust.Ref }

// Policy asks the root to cycle the tool's policy for this session.
type Policy struct{ Ref trust.Ref }

// Trust asks the root to cycle the server's trust for this session.
type Trust struct{ Server string }

// Update handles a key; what it asks for is about the row under the cursor
// after the key (Selected).
func (v *Model) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil, nil
	}
	v.list.Keys = v.keys.ScrollKeyMap
	if v.list.Update(k) {
		switch {
		case key.Matches(k, v.keys.PageUp):
			v.list.SetOffset(v.list.Offset() - v.visible())
		case key.Matches(k, v.keys.Top):
			v.list.SetOffset(0)
		}
	}
	// The key is matched before the keys are enabled for the new row; what it
	// asks is about the row the cursor is on after it.
	var ask func(ref trust.Ref, server string) screen.Intent
	switch {
	case key.Matches(k, v.keys.Back):
		ask = func(trust.Ref, string) screen.Intent { return screen.Back{} }
	case key.Matches(k, v.keys.Open):
		ask = func(r trust.Ref, _ string) screen.Intent { return OpenTool{r} }
	case key.Matches(k, v.keys.Disable):
		ask = func(r trust.Ref, _ string) screen.Intent { return Disable{r} }
	case key.Matches(k, v.keys.Policy):
		ask = func(r trust.Ref, _ string) screen.Intent { return Policy{r} }
	case key.Matches(k, v.keys.Trust):
		ask = func(_ trust.Ref, s string) screen.Intent { return Trust{s} }
	}
	v.clamp()
	v.updateKeys()
	if ask == nil {
		return nil, nil
	}
	return ask(v.Selected()), nil
}

// View renders the heading and the visible lines in a pane.
func (v Model) View() string {
	st := v.St
	iw, _ := common.PaneInner(v.width, v.height)
	n := 0
	if v.snap != nil {
		n = len(v.snap.Hazards)
	}
	head := "Hazards · " + strconv.Itoa(n) + " · x off · p policy · T trust: what-if for this session"
	lines := []string{common.PaneHeading(st, head, true, iw)}
	end := v.list.End()
	for i := v.list.Offset(); i < end; i++ {
		l := v.Lines[i]
		switch {
		case i == v.list.Cursor:
			lines = append(lines, st.Selected.Render(common.Fit("  ▸ "+ansi.Strip(l.Text), iw)))
		case l.selectable():
			lines = append(lines, "    "+l.Text)
		default:
			lines = append(lines, l.Text)
		}
	}
	if below := len(v.Lines) - end; below > 0 {
		lines = append(lines, st.Muted.Render(common.Fit("  ↓ "+strconv.Itoa(below)+" more line"+common.Plural(below)+" (pgdn)", iw)))
	}
	return common.PaneBox(st, true, v.width, v.height, lines)
}

// KeyMap returns the bindings that apply now, for the footer.
func (v Model) KeyMap() help.KeyMap {
	return common.KeyMapFunc{Short: v.keys.ShortHelp(), Full: v.keys.FullHelp()}
}

// OverrideCount is the number of live changes: one per server trust, per tool
// policy, per tool turned off and per rule turned off.
func OverrideCount(o model.Overrides) int {
	n := len(o.Trust) + len(o.Policy) + len(o.RulesOff)
	for _, off := range o.Disabled {
		if off {
			n++
		}
	}
	return n
}

// FenceText says what a server's sandbox enforces, escaped ("fenced: no network,
// reads ~/project, writes ~/project/out"); a sandbox asked for and not applied is
// a warning in the error style ("⚠ unfenced: sandbox requested but not applied:
// WHY").
func FenceText(st *theme.Styles, f trust.Fence) string {
	words := common.Inline(st, trust.FenceWords(f), 1000)
	if f.Requested && !f.Applied {
		return st.ErrorText.Render("⚠ unfenced") + st.ErrorText.Render(strings.TrimPrefix(words, "unfenced"))
	}
	return words
}

// KeyMap holds the keys of the hazards view. Disable, Policy and Open
// work on a tool row; Trust on a tool or server row.
type KeyMap struct {
	common.ScrollKeyMap // moves between the rows
	Open                key.Binding
	Disable             key.Binding
	Policy              key.Binding
	Trust               key.Binding
	Back                key.Binding
}

// DefaultKeyMap returns the hazards view's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		ScrollKeyMap: common.RowScrollKeyMap("previous tool", "next tool"),
		Open:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "tool details")),
		Disable:      key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "turn the tool off / on for this session")),
		Policy:       key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "its policy: none → ask → deny → none")),
		Trust:        key.NewBinding(key.WithKeys("T"), key.WithHelp("T", "its server's trust: trusted → untrusted → blocked")),
		Back:         key.NewBinding(key.WithKeys("esc", "z", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap, in words short enough for 80 columns.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{common.ShortKey(k.Down, "move"), common.ShortKey(k.Disable, "off"), common.ShortKey(k.Policy, "policy"),
		common.ShortKey(k.Trust, "trust"), common.ShortKey(k.Open, "details"), k.Back}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		k.Column(),
		{k.Disable, k.Policy, k.Trust, k.Open, k.Back},
	}
}

// policyWord is a leg row's action, as wide as its widest word: "allow" (it runs
// unasked, which is what makes a hazard unguarded), "ask" or "deny".
func policyWord(st *theme.Styles, a trust.Action) string {
	w := common.Fit(a.String(), 5)
	if a == trust.Allow {
		return st.WarnText.Render(w)
	}
	return st.Muted.Render(w)
}

// listed says what a server lists on a channel: "3 resources, 1 template", "4
// prompts", or "lists none now".
func listed(sv model.ServerInfo, k trust.ChannelKind) string {
	var parts []string
	count := func(n int, what string) {
		if n > 0 {
			parts = append(parts, strconv.Itoa(n)+" "+what+common.Plural(n))
		}
	}
	if k == trust.KindResources {
		count(len(sv.Resources), "resource")
		count(len(sv.ResourceTemplates), "template")
	} else {
		count(len(sv.Prompts), "prompt")
	}
	if len(parts) == 0 {
		return "lists none now"
	}
	return strings.Join(parts, ", ")
}
