package ui

// The Rules view: every argument rule — the config's and the remembered
// ones of rules.toml — with where it came from (config file and line, or rules.toml
// and the dialog call that saved it), its tool, conditions, policy, reason and how
// often it matched a call in this session. x revokes the selected remembered rule
// through a guarded question (revoking a deny rule makes airlock less careful, so
// it is answered like an allow: no letter revokes; →, enter, then ctrl+y); a config rule
// is the person's own file: the view says to edit it there.

import (
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/list"
	"github.com/airlock-mcp/airlock/ui/question"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// RulesKeyMap holds the keys of the Rules view.
type RulesKeyMap struct {
	common.ScrollKeyMap // moves the selection
	Revoke              key.Binding
	// Off turns the selected rule off for this session, or back on (a what-if
	// change: hazards are recomputed at once, E exports it).
	Off  key.Binding
	Back key.Binding
}

// DefaultRulesKeyMap returns the Rules view's keys.
func DefaultRulesKeyMap() RulesKeyMap {
	scroll := common.DefaultScrollKeyMap()
	scroll.Up.SetHelp("↑/k", "previous")
	scroll.Down.SetHelp("↓/j", "next")
	scroll.Top.SetHelp("g/home", "first")
	scroll.Bottom.SetHelp("G/end", "last")
	return RulesKeyMap{
		ScrollKeyMap: scroll,
		Revoke:       key.NewBinding(key.WithKeys("x", "d"), key.WithHelp("x/d", "revoke the selected remembered rule (asks; →, enter, ctrl+y)")),
		Off:          key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "turn the selected rule off for this session, or on (what-if)")),
		Back:         key.NewBinding(key.WithKeys("esc", "K", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap, in words short enough for 80 columns.
func (k RulesKeyMap) ShortHelp() []key.Binding {
	short := func(b key.Binding, desc string) key.Binding {
		b.SetHelp(b.Help().Key, desc)
		return b
	}
	return []key.Binding{short(k.Down, "move"), short(k.Revoke, "revoke"), short(k.Off, "off/on (what-if)"), k.Back}
}

// FullHelp implements help.KeyMap.
func (k RulesKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Revoke, k.Off, k.Back}}
}

// ruleLine is one line of the view; a rule's first line is selectable.
type ruleLine struct {
	text       string // rendered, escaped; without the cursor column
	rule       int    // index into rules, -1 for none
	selectable bool
}

// rulesView lists every rule. The root hands it AllRules when it opens, after a
// call finished and after a revoke.
type rulesView struct {
	*common.Common
	keys RulesKeyMap

	rules  []session.RuleEntry
	off    map[string]trust.Ref // rules turned off for this session (what-if)
	err    string               // the rules file's problem, if any
	lines  []ruleLine
	cursor int // index into lines of a selectable line, -1 when none
	offset int

	width, height int
}

func newRulesView(com *common.Common) rulesView {
	return rulesView{Common: com, keys: DefaultRulesKeyMap(), cursor: -1}
}

// SetSize sets the outer size.
func (v *rulesView) SetSize(w, h int) {
	v.width, v.height = w, h
	v.rebuild()
}

// setData takes fresh rules, keeping the cursor on the same rule.
func (v *rulesView) setData(rules []session.RuleEntry, err error) {
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
func (v rulesView) selected() *session.RuleEntry {
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

func (v *rulesView) rebuild() {
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
		if _, off := v.off[r.Name]; off {
			mark = st.Muted.Render("○ off  ")
			where += " · off for this session (o)"
		}
		room := max(iw-2-8-common.CellWidth(name)-3, 16)
		add(ruleLine{text: mark + " " + name + st.Muted.Render(" · "+common.Inline(st, where, room)), rule: i, selectable: true})
		add(ruleLine{text: "    when " + common.Inline(st, session.DescribeWhen(r.When), max(iw-12, 10)), rule: i})
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

func (v rulesView) next(i, dir int) int {
	return list.NextSelectable(len(v.lines), i, dir, func(i int) bool { return v.lines[i].selectable })
}

// visible is the number of lines below the heading, above the "more" line.
func (v rulesView) visible() int {
	_, ih := common.PaneInner(v.width, v.height)
	return max(ih-2, 1)
}

func (v *rulesView) clamp() {
	v.offset = list.ScrollTo(v.offset, v.cursor, v.next(0, 1), v.visible(), len(v.lines), 3) // a rule's other lines stay in view
}

func (v *rulesView) updateKeys() {
	r := v.selected()
	first, last := v.next(0, 1), v.next(len(v.lines)-1, -1)
	v.keys.Revoke.SetEnabled(r != nil)
	v.keys.Off.SetEnabled(r != nil)
	v.keys.ScrollKeyMap.Enable(v.cursor > first, v.cursor >= 0 && v.cursor < last)
}

// rulesAction is what a key in the Rules view asks the root to do.
type rulesAction int

const (
	rulesNone rulesAction = iota
	rulesBack
	rulesRevoke
	rulesOff
)

// Update handles a key; the root acts on the returned action for selected().
func (v rulesView) Update(k tea.KeyPressMsg) (rulesView, rulesAction) {
	act := rulesNone
	if to, ok := list.Move(k, v.keys.ScrollKeyMap, v.cursor, len(v.lines), v.visible(), func(i int) bool { return v.lines[i].selectable }); ok {
		v.cursor = to
	}
	switch {
	case key.Matches(k, v.keys.Back):
		act = rulesBack
	case key.Matches(k, v.keys.Revoke):
		act = rulesRevoke
	case key.Matches(k, v.keys.Off):
		act = rulesOff
	}
	v.clamp()
	v.updateKeys()
	return v, act
}

// View renders the heading and the visible lines in a pane.
func (v rulesView) View() string {
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

// keyMap returns the bindings that apply now, for the footer.
func (v rulesView) keyMap() common.KeyMapFunc {
	return common.KeyMapFunc{Short: v.keys.ShortHelp(), Full: v.keys.FullHelp()}
}

// choiceRevokeRule prefixes the tag of the question that revokes a remembered
// rule; the rule's id follows it.
const choiceRevokeRule = "revoke-rule:"

// choiceRuleOff prefixes the tag of the question that turns a deny or ask rule off
// for this session; the rule's name follows it.
const choiceRuleOff = "rule-off:"

// toggleRuleOff turns the rule named name off for this session, or back on.
func (m *Model) toggleRuleOff(name string, ref trust.Ref) tea.Cmd {
	_, off := m.over.RulesOff[name]
	what := "rule " + common.Inline(m.St, name, 48) + " turned off for this session"
	if off {
		what = "rule " + common.Inline(m.St, name, 48) + " turned back on"
	}
	return whatIfCmd(m.sess, what, func(s *session.Manager) error { return s.SetRuleOff(name, ref, !off) })
}

// applyRuleOff carries out the answer of the question that turns a rule off.
func (m *Model) applyRuleOff(name string, turnOff bool) (*Model, tea.Cmd) {
	if !turnOff {
		m.status = "kept rule " + common.Inline(m.St, name, 48) + " on"
		return m, nil
	}
	if _, off := m.over.RulesOff[name]; off {
		return m, nil // already off
	}
	rules, _ := m.sess.AllRules()
	for _, r := range rules {
		if r.Name == name {
			return m, m.toggleRuleOff(name, trust.Ref{Server: r.Server, Tool: r.Tool})
		}
	}
	m.status = "rule " + common.Inline(m.St, name, 48) + " is gone: nothing was turned off"
	return m, nil
}

// ruleRevokedMsg reports the end of revoking a remembered rule.
type ruleRevokedMsg struct {
	label string
	err   error
}

// openRules shows the Rules view over the current screen; esc returns to it.
func (m *Model) openRules() {
	m.rules.cursor, m.rules.offset = -1, 0
	m.refreshRules()
	m.push(screenRules)
}

// refreshRules gives the view every rule as it stands now.
func (m *Model) refreshRules() {
	m.rules.off = m.over.RulesOff
	m.rules.setData(m.sess.AllRules())
}

// rulesKey handles a key of the Rules view.
func (m *Model) rulesKey(k tea.KeyPressMsg) (*Model, tea.Cmd) {
	var act rulesAction
	m.rules, act = m.rules.Update(k)
	switch act {
	case rulesBack:
		m.pop()
	case rulesOff:
		r := m.rules.selected()
		if r == nil {
			break
		}
		if _, off := m.over.RulesOff[r.Name]; !off && r.Policy != trust.Allow {
			// Turning a deny or ask rule off loosens: the calls it stopped may then
			// run unasked (a read the tier allows). Like revoking one, it takes the
			// chord; turning an allow rule off, or any rule back on, does not.
			stops := "It denied"
			if r.Policy == trust.Ask {
				stops = "It asked about"
			}
			lines := []string{
				common.Inline(m.St, trust.Ref{Server: r.Server, Tool: r.Tool}.Qualified(), 60) + " · " + r.Policy.String() + " when " + common.Inline(m.St, session.DescribeWhen(r.When), 200),
				"",
				stops + " calls to this tool whose arguments match. While it is off, for this session, the tier's policy (or another rule) decides them, and they may run unasked. o turns it back on; U undoes every what-if change.",
			}
			return m, m.q.AskChoice(choiceRuleOff+r.Name, "Turn "+r.Policy.String()+" rule "+common.Inline(m.St, r.Name, 48)+" off?", lines,
				[2]string{"Keep it on", "Turn it off"}, question.GuardedChoiceKeys("keep", "turn the rule off"))
		}
		return m, m.toggleRuleOff(r.Name, trust.Ref{Server: r.Server, Tool: r.Tool})
	case rulesRevoke:
		r := m.rules.selected()
		if r == nil {
			break
		}
		if !r.Remembered {
			m.status = "edit " + common.Inline(m.St, r.Source, 40) + " to change this rule: it is in your config, which airlock never writes (" + common.Inline(m.St, r.Name, 48) + ")"
			break
		}
		what := "It allowed"
		after := "Afterwards these calls ask again."
		switch r.Policy {
		case trust.Deny:
			what, after = "It denied", "Afterwards these calls are no longer denied by it: the tier's policy (or another rule) decides, and they may run."
		case trust.Ask:
			what = "It asked about"
		}
		lines := []string{
			common.Inline(m.St, trust.Ref{Server: r.Server, Tool: r.Tool}.Qualified(), 60) + " · " + r.Policy.String() + " when " + common.Inline(m.St, session.DescribeWhen(r.When), 200),
			"",
			what + " calls to this tool whose arguments match; it matched " + strconv.Itoa(r.Matched) + " call" + common.Plural(r.Matched) + " this session. " + after +
				" Every running airlock sees the change; the audit log records it.",
		}
		return m, m.q.AskChoice(choiceRevokeRule+r.Name, "Revoke remembered rule "+common.Inline(m.St, r.Name, 24)+"?", lines,
			[2]string{"Keep it", "Revoke"}, question.GuardedChoiceKeys("keep", "revoke the rule"))
	}
	return m, nil
}

// revokeRuleCmd revokes a remembered rule off the UI's goroutine: rules.toml is
// written under a lock another airlock process may hold.
func revokeRuleCmd(e *session.Engine, id string) tea.Cmd {
	return func() tea.Msg {
		return ruleRevokedMsg{label: id, err: e.RevokeRule(id)}
	}
}

// applyRevokeRule carries out the answer of the revoke question.
func (m *Model) applyRevokeRule(id string, revoke bool) (*Model, tea.Cmd) {
	if !revoke {
		m.status = "kept rule " + common.Inline(m.St, id, 24)
		return m, nil
	}
	m.status = "revoking rule " + common.Inline(m.St, id, 24) + "…"
	return m, revokeRuleCmd(m.sess.Engine(), id)
}

// ruleRevoked reports how revoking ended and refreshes the view.
func (m *Model) ruleRevoked(msg ruleRevokedMsg) (*Model, tea.Cmd) {
	name := common.Inline(m.St, msg.label, 24)
	if msg.err != nil {
		m.status = "✗ rule " + name + " was not revoked: " + common.Inline(m.St, msg.err.Error(), 120)
	} else {
		m.status = "✓ revoked rule " + name + " (audited): the calls it decided ask again"
	}
	if m.screen == screenRules {
		m.refreshRules()
	}
	return m, nil
}
