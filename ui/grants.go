package ui

// The Grants view: per context — the person
// ("you") and each agent — its taint and its standing grants. x (or d) revokes the
// selected grant at once: revoking only brings questions back, so a key pressed by
// mistake costs a question, never an allow. C asks, through the question overlay and
// its input guard, whether to clear the selected context's taint: clearing makes
// airlock less careful, so it is answered like an allow (no letter clears; →, enter,
// then ctrl+y), and it clears only the taint the question showed.

import (
	"sort"
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
)

// GrantsKeyMap holds the keys of the Grants view.
type GrantsKeyMap struct {
	common.ScrollKeyMap // moves the selection
	Revoke              key.Binding
	ClearTaint          key.Binding
	Back                key.Binding
}

// DefaultGrantsKeyMap returns the Grants view's keys.
func DefaultGrantsKeyMap() GrantsKeyMap {
	scroll := common.DefaultScrollKeyMap()
	scroll.Up.SetHelp("↑/k", "previous")
	scroll.Down.SetHelp("↓/j", "next")
	scroll.Top.SetHelp("g/home", "first")
	scroll.Bottom.SetHelp("G/end", "last")
	return GrantsKeyMap{
		ScrollKeyMap: scroll,
		Revoke:       key.NewBinding(key.WithKeys("x", "d"), key.WithHelp("x/d", "revoke the selected grant (at once: it only brings questions back)")),
		ClearTaint:   key.NewBinding(key.WithKeys("C"), key.WithHelp("C", "clear the selected context's taint (asks; →, enter, ctrl+y)")),
		Back:         key.NewBinding(key.WithKeys("esc", "w", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap, in words short enough for 80 columns.
func (k GrantsKeyMap) ShortHelp() []key.Binding {
	short := func(b key.Binding, desc string) key.Binding {
		b.SetHelp(b.Help().Key, desc)
		return b
	}
	return []key.Binding{short(k.Down, "move"), short(k.Revoke, "revoke"), short(k.ClearTaint, "clear taint"), k.Back}
}

// FullHelp implements help.KeyMap.
func (k GrantsKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Revoke, k.ClearTaint, k.Back}}
}

// grantsCtx is one context as the view lists it.
type grantsCtx struct {
	name   string // the context's key: "you", token:NAME, or (from an earlier airlock) agent-NAME-HASH
	client string // the client name the agent gave, as given; "" when unknown
	taint  trust.Taint
	grants []session.Grant
}

// grLine is one line of the view; a selectable line is a context's heading (grant
// < 0) or a grant's first line.
type grLine struct {
	text       string // rendered, escaped; without the cursor column
	ctx        int    // index into ctxs
	grant      int    // index into ctxs[ctx].grants, -1 for the context's heading
	selectable bool
}

// grantsView lists, per context, its taint (which call and channel tainted it,
// when) and its grants (tool, scope, when, by whom, and the tier, trust and policy
// they were given under). The root hands it fresh data from the engine while it is
// shown and carries out revoke and clear.
type grantsView struct {
	*common.Common
	keys GrantsKeyMap
	loc  *time.Location // times are shown in it (tests fix it)

	ctxs   []grantsCtx
	lines  []grLine
	cursor int // index into lines of a selectable line, -1 when none
	offset int

	width, height int
}

func newGrantsView(com *common.Common) grantsView {
	return grantsView{Common: com, keys: DefaultGrantsKeyMap(), loc: time.Local, cursor: -1}
}

// SetSize sets the outer size.
func (v *grantsView) SetSize(w, h int) {
	v.width, v.height = w, h
	v.rebuild()
}

// grantsData collects every context with a grant or a taint from the engine, the
// person's context first (always listed, so its taint can be cleared here).
func grantsData(e *session.Engine) []grantsCtx {
	by := map[string]*grantsCtx{session.PersonContext: {name: session.PersonContext}}
	get := func(k string) *grantsCtx {
		c := by[k]
		if c == nil {
			c = &grantsCtx{name: k, client: e.ContextClient(k)}
			by[k] = c
		}
		return c
	}
	for k, t := range e.Taints() {
		get(k).taint = t
	}
	for _, g := range e.Grants() {
		c := get(g.Context)
		c.grants = append(c.grants, g)
	}
	out := make([]grantsCtx, 0, len(by))
	for _, c := range by {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].name == session.PersonContext) != (out[j].name == session.PersonContext) {
			return out[i].name == session.PersonContext
		}
		return out[i].name < out[j].name
	})
	return out
}

// setData takes fresh contexts, keeping the cursor on the same grant or context.
func (v *grantsView) setData(ctxs []grantsCtx) {
	keep := v.selectedKey()
	v.ctxs = ctxs
	v.rebuild()
	for i, l := range v.lines {
		if l.selectable && v.lineKey(l) == keep && keep != "" {
			v.cursor = i
		}
	}
	v.clamp()
	v.updateKeys()
}

func (v grantsView) lineKey(l grLine) string {
	c := v.ctxs[l.ctx]
	if l.grant < 0 {
		return "c\x00" + c.name
	}
	return "g\x00" + c.name + "\x00" + c.grants[l.grant].Ref.Qualified()
}

func (v grantsView) selectedKey() string {
	if v.cursor < 0 || v.cursor >= len(v.lines) {
		return ""
	}
	return v.lineKey(v.lines[v.cursor])
}

// selected returns the context and, on a grant's line, the grant under the cursor.
func (v grantsView) selected() (*grantsCtx, *session.Grant) {
	if v.cursor < 0 || v.cursor >= len(v.lines) {
		return nil, nil
	}
	l := v.lines[v.cursor]
	c := &v.ctxs[l.ctx]
	if l.grant < 0 {
		return c, nil
	}
	return c, &c.grants[l.grant]
}

// when formats a time of the view.
func (v grantsView) when(t time.Time) string {
	if t.IsZero() {
		return "at an unknown time"
	}
	return t.In(v.loc).Format("Jan 2 15:04:05")
}

// contextTitle names a context: the person, or an agent's token with the client
// name it last gave (escaped) and the context's key.
func (v grantsView) contextTitle(c grantsCtx) string {
	st := v.St
	if c.name == session.PersonContext {
		return st.Title.Render("you") + st.Muted.Render(" · your own calls in this TUI")
	}
	if tok, ok := strings.CutPrefix(c.name, "token:"); ok {
		// The token is who the agent is; the client name is what the last agent
		// with it called itself (any holder of the token may choose it).
		s := st.Title.Render("token ") + common.Inline(st, tok, 32)
		if c.client != "" {
			s += st.Muted.Render(" · client ") + common.Inline(st, c.client, 32)
		}
		return s + st.Muted.Render(" · context "+common.Inline(st, c.name, 48))
	}
	client := c.client
	if client == "" {
		client = agentNameOf(c.name)
	}
	return st.Title.Render("agent ") + common.Inline(st, client, 32) + st.Muted.Render(" · context "+common.Inline(st, c.name, 48))
}

// agentNameOf is the cut client name inside an agent context's key
// (agent-NAME-HASH), for a context this run has not seen.
func agentNameOf(k string) string {
	s := strings.TrimPrefix(k, "agent-")
	if i := strings.LastIndexByte(s, '-'); i > 0 {
		s = s[:i]
	}
	return s
}

// taintText says how a context was tainted: by which call, channel and server, when.
func (v grantsView) taintText(t trust.Taint) string {
	st := v.St
	if !t.Tainted() {
		return st.OKText.Render("● clean")
	}
	ch := t.Channel
	if ch == "" {
		ch = trust.ChannelResult
	}
	s := "⚠ tainted by " + common.Inline(st, t.By.Qualified(), 40) + " (its " + ch + ")"
	if t.CallID != "" {
		s += " · call " + common.Inline(st, t.CallID, 16)
	}
	return st.WarnText.Render(s) + st.Muted.Render(" · "+v.when(t.At))
}

func (v *grantsView) rebuild() {
	st := v.St
	iw, _ := common.PaneInner(v.width, v.height)
	v.lines = v.lines[:0]
	add := func(l grLine) { v.lines = append(v.lines, l) }
	for ci, c := range v.ctxs {
		if ci > 0 {
			add(grLine{ctx: ci, grant: -1})
		}
		add(grLine{text: v.contextTitle(c), ctx: ci, grant: -1, selectable: true})
		add(grLine{text: "  " + v.taintText(c.taint), ctx: ci, grant: -1})
		if len(c.grants) == 0 {
			add(grLine{text: st.Muted.Render("  no grants: every call that asks, asks"), ctx: ci, grant: -1})
		}
		for gi, g := range c.grants {
			scope := g.Scope
			if scope == "" {
				scope = "the whole tool"
			}
			add(grLine{text: "✓ " + common.Inline(st, g.Ref.Qualified(), max(iw/2, 20)) + st.Muted.Render(" · "+scope), ctx: ci, grant: gi, selectable: true})
			by := g.By
			if g.CallID != "" {
				by += " (call " + common.Inline(st, g.CallID, 16) + ")"
			}
			policy := g.Policy.String()
			if policy == "" {
				policy = "tier default"
			}
			fp := g.Fingerprint
			if len(fp) > 12 {
				fp = fp[:12]
			}
			add(grLine{text: st.Muted.Render("      granted " + v.when(g.At) + " by " + by), ctx: ci, grant: gi})
			add(grLine{text: st.Muted.Render("      while " + g.Tier.String() + " · server " + g.Trust.String() + " · policy " + policy + " · sha256 " + fp), ctx: ci, grant: gi})
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

func (v grantsView) next(i, dir int) int {
	return list.NextSelectable(len(v.lines), i, dir, func(i int) bool { return v.lines[i].selectable })
}

// visible is the number of lines below the heading, above the "more" line.
func (v grantsView) visible() int {
	_, ih := common.PaneInner(v.width, v.height)
	return max(ih-2, 1)
}

func (v *grantsView) clamp() {
	v.offset = list.ScrollTo(v.offset, v.cursor, v.next(0, 1), v.visible(), len(v.lines), 2) // a grant's other lines stay in view
}

func (v *grantsView) updateKeys() {
	c, g := v.selected()
	first, last := v.next(0, 1), v.next(len(v.lines)-1, -1)
	v.keys.Revoke.SetEnabled(g != nil)
	v.keys.ClearTaint.SetEnabled(c != nil && c.taint.Tainted())
	v.keys.ScrollKeyMap.Enable(v.cursor > first, v.cursor >= 0 && v.cursor < last)
}

// grantsAction is what a key in the Grants view asks the root to do.
type grantsAction int

const (
	grantsNone grantsAction = iota
	grantsBack
	grantsRevoke
	grantsClearTaint
)

// Update handles a key; the root acts on the returned action for selected().
func (v grantsView) Update(k tea.KeyPressMsg) (grantsView, grantsAction) {
	act := grantsNone
	if to, ok := list.Move(k, v.keys.ScrollKeyMap, v.cursor, len(v.lines), v.visible(), func(i int) bool { return v.lines[i].selectable }); ok {
		v.cursor = to
	}
	switch {
	case key.Matches(k, v.keys.Back):
		act = grantsBack
	case key.Matches(k, v.keys.Revoke):
		act = grantsRevoke
	case key.Matches(k, v.keys.ClearTaint):
		act = grantsClearTaint
	}
	v.clamp()
	v.updateKeys()
	return v, act
}

// View renders the heading and the visible lines in a pane.
func (v grantsView) View() string {
	st := v.St
	iw, _ := common.PaneInner(v.width, v.height)
	n := 0
	for _, c := range v.ctxs {
		n += len(c.grants)
	}
	head := "Grants & taint · " + strconv.Itoa(len(v.ctxs)) + " context" + common.Plural(len(v.ctxs)) + " · " +
		strconv.Itoa(n) + " grant" + common.Plural(n) + " · x revoke · C clear taint"
	lines := []string{common.PaneHeading(st, head, true, iw)}
	end := min(v.offset+v.visible(), len(v.lines))
	for i := v.offset; i < end; i++ {
		l := v.lines[i]
		switch {
		case i == v.cursor:
			lines = append(lines, st.Selected.Render(common.Fit("▸ "+ansi.Strip(l.text), iw)))
		default:
			lines = append(lines, "  "+l.text)
		}
	}
	if below := len(v.lines) - end; below > 0 {
		lines = append(lines, st.Muted.Render(common.Fit("  ↓ "+strconv.Itoa(below)+" more line"+common.Plural(below)+" (pgdn)", iw)))
	}
	return common.PaneBox(st, true, v.width, v.height, lines)
}

// keyMap returns the bindings that apply now, for the footer.
func (v grantsView) keyMap() common.KeyMapFunc {
	return common.KeyMapFunc{Short: v.keys.ShortHelp(), Full: v.keys.FullHelp()}
}

// taintClearedMsg reports the end of clearing a context's taint.
type taintClearedMsg struct {
	ctx string
	err error
}

// openGrants shows the Grants view over the current screen; esc returns to it.
func (m *Model) openGrants() {
	m.grants.cursor, m.grants.offset = -1, 0
	m.refreshGrants()
	m.push(screenGrants)
}

// refreshGrants gives the view (and the status line) the engine's grants and
// taint as they are now.
func (m *Model) refreshGrants() {
	m.grants.setData(grantsData(m.sess.Engine()))
	m.taint = m.sess.Engine().Taint("")
}

// grantsKey handles a key of the Grants view.
func (m *Model) grantsKey(k tea.KeyPressMsg) (*Model, tea.Cmd) {
	var act grantsAction
	m.grants, act = m.grants.Update(k)
	c, g := m.grants.selected()
	switch act {
	case grantsBack:
		m.pop()
	case grantsRevoke:
		if g == nil {
			break
		}
		// Revoking is done at once, without a question: it only makes the next
		// call of that tool in that context ask again.
		name := common.Inline(m.St, g.Ref.Qualified(), 40)
		if err := m.sess.Engine().Revoke(g.Context, g.Ref); err != nil {
			m.status = "✗ could not revoke " + name + ": " + common.Inline(m.St, err.Error(), 80)
		} else {
			m.status = "✓ revoked " + name + " for " + common.Inline(m.St, g.Context, 32) + ": its next call asks again"
		}
		m.refreshGrants()
	case grantsClearTaint:
		if c == nil || !c.taint.Tainted() {
			break
		}
		lines := []string{v2line(m.grants.contextTitle(*c)), v2line(m.grants.taintText(c.taint))}
		return m, m.q.AskClearTaint(c.name, c.taint, common.Inline(m.St, c.name, 40), lines)
	}
	return m, nil
}

// v2line strips styles from a line of the view for a question's body, which
// styles its own text.
func v2line(s string) string { return ansi.Strip(s) }

// clearTaintCmd clears the taint the person was shown, off the UI's goroutine:
// taint.json is written under a lock another airlock process may hold.
func clearTaintCmd(e *session.Engine, a question.ClearTaintAnswer) tea.Cmd {
	return func() tea.Msg {
		return taintClearedMsg{ctx: a.Context, err: e.ClearTaintShown(a.Context, a.Taint)}
	}
}

// applyClearTaint carries out the answer of the clear-taint question.
func (m *Model) applyClearTaint(a question.ClearTaintAnswer) (*Model, tea.Cmd) {
	if !a.Clear {
		m.status = "kept " + common.Inline(m.St, a.Context, 32) + " tainted"
		return m, nil
	}
	m.status = "clearing the taint of " + common.Inline(m.St, a.Context, 32) + "…"
	return m, clearTaintCmd(m.sess.Engine(), a)
}

// taintCleared reports how clearing ended and refreshes what shows taint.
func (m *Model) taintCleared(msg taintClearedMsg) (*Model, tea.Cmd) {
	name := common.Inline(m.St, msg.ctx, 32)
	if msg.err != nil {
		m.status = "✗ the taint of " + name + " was not cleared: " + common.Inline(m.St, msg.err.Error(), 120)
	} else {
		m.status = "✓ cleared the taint of " + name + " (audited)"
	}
	m.taint = m.sess.Engine().Taint("")
	if m.screen == screenGrants {
		m.refreshGrants()
	}
	return m, nil
}
