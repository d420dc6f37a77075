// Package rules is the Rules screen (K): every argument rule — the config's and
// the remembered ones of rules.toml — with where it came from (config file and
// line, or rules.toml and the dialog call that saved it), its tool, conditions,
// policy, reason and how often it matched a call in this session. Its keys ask
// the root to revoke the selected rule or turn it off for this session; the root
// hands it the rules and never lets it read the session.
package rules

import (
	"strconv"
	"strings"
	"time"

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

// KeyMap holds the keys of the Rules view.
type KeyMap struct {
	common.ScrollKeyMap // moves the selection
	Revoke              key.Binding
	// Off turns the selected rule off for this session, or back on (a what-if
	// change: hazards are recomputed at once, E exports it).
	Off  key.Binding
	Back key.Binding
}

// DefaultKeyMap returns the Rules view's keys.
func DefaultKeyMap() KeyMap {
	scroll := common.DefaultScrollKeyMap()
	scroll.Up.SetHelp("↑/k", "previous")
	scroll.Down.SetHelp("↓/j", "next")
	scroll.Top.SetHelp("g/home", "first")
	scroll.Bottom.SetHelp("G/end", "last")
	return KeyMap{
		ScrollKeyMap: scroll,
		Revoke:       key.NewBinding(key.WithKeys("x", "d"), key.WithHelp("x/d", "revoke the selected remembered rule (asks; →, enter, ctrl+y)")),
		Off:          key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "turn the selected rule off for this session, or on (what-if)")),
		Back:         key.NewBinding(key.WithKeys("esc", "K", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap, in words short enough for 80 columns.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{common.ShortKey(k.Down, "move"), common.ShortKey(k.Revoke, "revoke"), common.ShortKey(k.Off, "off/on (what-if)"), k.Back}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Revoke, k.Off, k.Back}}
}

// ruleLine is one line of the view; a rule's first line is selectable.
type ruleLine struct {
	text       string // rendered, escaped; without the cursor column
	rule       int    // index into rules, -1 for none
	selectable bool
}

// Model lists every rule. The root hands it AllRules when it opens, after a
// call finished and after a revoke.
type Model struct {
	*common.Common
	keys KeyMap

	rules []model.RuleEntry
	// Off is the rules turned off for this session (what-if), the root's.
	Off    map[string]trust.Ref
	err    string // the rules file's problem, if any
	lines  []ruleLine
	cursor int // index into lines of a selectable line, -1 when none
	offset int

	// describe words a rule's conditions (the session's DescribeWhen).
	describe func(map[string]map[string]any) string

	width, height int
}

// New returns the Rules screen over the root's Common; describe words a rule's
// conditions as the session does.
func New(com *common.Common, describe func(map[string]map[string]any) string) Model {
	return Model{Common: com, keys: DefaultKeyMap(), cursor: -1, describe: describe}
}

// Reset puts the cursor back on the first rule and the list at its top.
func (v *Model) Reset() { v.cursor, v.offset = -1, 0 }

// SetSize sets the outer size.
func (v *Model) SetSize(w, h int) {
	v.width, v.height = w, h
	v.rebuild()
}

// SetData takes fresh rules, keeping the cursor on the same rule.
func (v *Model) SetData(rules []model.RuleEntry, err error) {
	keep := ""
	if r := v.selected(); r != nil {
		keep = r.Label()
	}
	v.rules, v.err = rules, ""
	if err != nil {
		v.err = err.Error()
	}
	v.cursor = -1
	v.rebuild()
	for i, l := range v.lines {
		if l.selectable && keep != "" && v.rules[l.rule].Label() == keep {
			v.cursor = i
		}
	}
	if v.cursor < 0 {
		v.cursor = v.next(0, 1)
	}
	v.clamp()
	v.updateKeys()
}

// selected is the rule under the cursor, nil when none.
func (v *Model) selected() *model.RuleEntry {
	if v.cursor < 0 || v.cursor >= len(v.lines) || v.lines[v.cursor].rule < 0 {
		return nil
	}
	return &v.rules[v.lines[v.cursor].rule]
}

// policyMark is a rule's policy with its glyph: what it does to a call.
func policyMark(st *theme.Styles, p trust.Action) string {
	switch p {
	case trust.Allow:
		return st.WarnText.Render("✓ allow")
	case trust.Deny:
		return st.OKText.Render("⊘ deny ")
	}
	return st.Muted.Render("? ask  ")
}

func (v *Model) rebuild() {
	st := v.St
	iw, _ := common.PaneInner(v.width, v.height)
	v.lines = v.lines[:0]
	add := func(l ruleLine) { v.lines = append(v.lines, l) }
	if v.err != "" {
		add(ruleLine{text: st.ErrorText.Render("⚠ rules.toml: ") + common.Inline(st, v.err, max(iw-16, 10)), rule: -1})
	}
	if len(v.rules) == 0 {
		add(ruleLine{text: st.Muted.Render("no rules: write [[servers.NAME.tools.TOOL.rules]] in the config, or"), rule: -1})
		add(ruleLine{text: st.Muted.Render("answer a dialog with Always allow… or Always deny…"), rule: -1})
	}
	for i, r := range v.rules {
		if i > 0 {
			add(ruleLine{rule: -1})
		}
		name := common.Inline(st, trust.Ref{Server: r.Server, Tool: r.Tool}.Qualified(), max(iw/2, 16))
		where := "config " + r.Source
		if r.Remembered {
			where = "remembered " + r.Name
		}
		mark := policyMark(st, r.Policy)
		if _, off := v.Off[r.Name]; off {
			mark = st.Muted.Render("○ off  ")
			where += " · off for this session (o)"
		}
		room := max(iw-2-8-common.CellWidth(name)-3, 16)
		add(ruleLine{text: mark + " " + name + st.Muted.Render(" · "+common.Inline(st, where, room)), rule: i, selectable: true})
		add(ruleLine{text: "    when " + common.Inline(st, v.describe(r.When), max(iw-12, 10)), rule: i})
		var facts []string
		if r.Reason != "" {
			facts = append(facts, "“"+common.Inline(st, r.Reason, 40)+"”")
		}
		facts = append(facts, "matched "+strconv.Itoa(r.Matched)+" call"+common.Plural(r.Matched)+" this session")
		if !r.LastMatch.IsZero() {
			facts = append(facts, "last at "+r.LastMatch.Local().Format(time.TimeOnly))
		}
		if r.Remembered {
			facts = append(facts, "x revokes")
		} else {
			facts = append(facts, "in your config")
		}
		add(ruleLine{text: st.Muted.Render("    " + strings.Join(facts, " · ")), rule: i})
		if r.From != "" {
			add(ruleLine{text: st.Muted.Render("    saved from " + common.Inline(st, r.From, max(iw-16, 10))), rule: i})
		}
		if r.Problem != "" {
			add(ruleLine{text: st.ErrorText.Render("    ✗ broken, every call of the tool asks: ") + common.Inline(st, r.Problem, max(iw-42, 10)), rule: i})
		}
	}
	if v.cursor >= len(v.lines) || (v.cursor >= 0 && !v.lines[v.cursor].selectable) {
		v.cursor = -1
	}
	if v.cursor < 0 {
		v.cursor = v.next(0, 1)
	}
	v.clamp()
	v.updateKeys()
}

func (v *Model) next(i, dir int) int {
	return list.NextSelectable(len(v.lines), i, dir, func(i int) bool { return v.lines[i].selectable })
}

// visible is the number of lines below the heading, above the "more" line.
func (v *Model) visible() int {
	_, ih := common.PaneInner(v.width, v.height)
	return max(ih-2, 1)
}

func (v *Model) clamp() {
	v.offset = list.ScrollTo(v.offset, v.cursor, v.next(0, 1), v.visible(), len(v.lines), 3) // a rule's other lines stay in view
}

func (v *Model) updateKeys() {
	r := v.selected()
	first, last := v.next(0, 1), v.next(len(v.lines)-1, -1)
	v.keys.Revoke.SetEnabled(r != nil)
	v.keys.Off.SetEnabled(r != nil)
	v.keys.ScrollKeyMap.Enable(v.cursor > first, v.cursor >= 0 && v.cursor < last)
}

// Revoke asks the root to revoke Rule (a config rule: to say where to edit it).
type Revoke struct{ Rule model.RuleEntry }

// Off asks the root to turn Rule off for this session, or back on.
type Off struct{ Rule model.RuleEntry }

// Update handles a key; revoking and turning off ask for the selected rule.
func (v *Model) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil, nil
	}
	var intent screen.Intent
	if to, ok := list.Move(k, v.keys.ScrollKeyMap, v.cursor, len(v.lines), v.visible(), func(i int) bool { return v.lines[i].selectable }); ok {
		v.cursor = to
	}
	switch {
	case key.Matches(k, v.keys.Back):
		intent = screen.Back{}
	case key.Matches(k, v.keys.Revoke):
		if r := v.selected(); r != nil {
			intent = Revoke{Rule: *r}
		}
	case key.Matches(k, v.keys.Off):
		if r := v.selected(); r != nil {
			intent = Off{Rule: *r}
		}
	}
	v.clamp()
	v.updateKeys()
	return intent, nil
}

// View renders the heading and the visible lines in a pane.
func (v *Model) View() string {
	st := v.St
	iw, _ := common.PaneInner(v.width, v.height)
	saved := 0
	for _, r := range v.rules {
		if r.Remembered {
			saved++
		}
	}
	head := "Rules · " + strconv.Itoa(len(v.rules)) + " rule" + common.Plural(len(v.rules)) + " · " + strconv.Itoa(saved) + " remembered · x revoke"
	lines := []string{common.PaneHeading(st, head, true, iw)}
	end := min(v.offset+v.visible(), len(v.lines))
	for i := v.offset; i < end; i++ {
		l := v.lines[i]
		if i == v.cursor {
			lines = append(lines, st.Selected.Render(common.Fit("▸ "+ansi.Strip(l.text), iw)))
		} else {
			lines = append(lines, common.Fit("  "+l.text, iw))
		}
	}
	if below := len(v.lines) - end; below > 0 {
		lines = append(lines, st.Muted.Render(common.Fit("  ↓ "+strconv.Itoa(below)+" more line"+common.Plural(below)+" (pgdn)", iw)))
	}
	return common.PaneBox(st, true, v.width, v.height, lines)
}

// KeyMap returns the bindings that apply now, for the footer.
func (v *Model) KeyMap() help.KeyMap {
	return common.KeyMapFunc{Short: v.keys.ShortHelp(), Full: v.keys.FullHelp()}
}
