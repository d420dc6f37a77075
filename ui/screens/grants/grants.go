// Package grants is the Grants view (w): per context — the person's and each
// agent's — its taint (which call and channel tainted it, when) and its grants
// (tool, scope, when, by whom, and the tier, trust and policy they were given
// under). Its keys ask the root to revoke the selected grant or to ask whether
// to clear the selected context's taint; the root hands it the engine's data and
// never lets it read the session.
package grants

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
)

// KeyMap holds the keys of the Grants view.
type KeyMap struct {
	common.ScrollKeyMap // moves the selection
	Revoke              key.Binding
	ClearTaint          key.Binding
	Back                key.Binding
}

// DefaultKeyMap returns the Grants view's keys.
func DefaultKeyMap() KeyMap {
	scroll := common.DefaultScrollKeyMap()
	scroll.Up.SetHelp("↑/k", "previous")
	scroll.Down.SetHelp("↓/j", "next")
	scroll.Top.SetHelp("g/home", "first")
	scroll.Bottom.SetHelp("G/end", "last")
	return KeyMap{
		ScrollKeyMap: scroll,
		Revoke:       key.NewBinding(key.WithKeys("x", "d"), key.WithHelp("x/d", "revoke the selected grant (at once: it only brings questions back)")),
		ClearTaint:   key.NewBinding(key.WithKeys("C"), key.WithHelp("C", "clear the selected context's taint (asks; →, enter, ctrl+y)")),
		Back:         key.NewBinding(key.WithKeys("esc", "w", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap, in words short enough for 80 columns.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{common.ShortKey(k.Down, "move"), common.ShortKey(k.Revoke, "revoke"), common.ShortKey(k.ClearTaint, "clear taint"), k.Back}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Revoke, k.ClearTaint, k.Back}}
}

// Context is one context as the view lists it.
type Context struct {
	Name   string // the context's key: "you", token:NAME, or (from an earlier airlock) agent-NAME-HASH
	Client string // the client name the agent gave, as given; "" when unknown
	Taint  trust.Taint
	Grants []Grant
}

// Grant is one of a context's grants in the fields the view shows (the
// session's grant: what was allowed, when, by whom, and what the tool was then).
type Grant struct {
	Context string
	Ref     trust.Ref
	Scope   string
	At      time.Time
	By      string
	CallID  string
	// The binding: what the tool was when granted.
	Fingerprint string
	Tier        trust.Tier
	Trust       trust.ServerTrust
	Policy      trust.Action
}

// grLine is one line of the view; a selectable line is a context's heading (grant
// < 0) or a grant's first line.
type grLine struct {
	text       string // rendered, escaped; without the cursor column
	ctx        int    // index into ctxs
	grant      int    // index into ctxs[ctx].grants, -1 for the context's heading
	selectable bool
}

// Model lists, per context, its taint (which call and channel tainted it,
// when) and its grants (tool, scope, when, by whom, and the tier, trust and policy
// they were given under). The root hands it fresh data from the engine while it is
// shown and carries out revoke and clear.
type Model struct {
	*common.Common
	keys KeyMap
	// Loc is where times are shown (tests fix it).
	Loc *time.Location

	ctxs   []Context
	lines  []grLine
	cursor int // index into lines of a selectable line, -1 when none
	offset int

	width, height int
}

// New returns the Grants screen over the root's Common.
func New(com *common.Common) Model {
	return Model{Common: com, keys: DefaultKeyMap(), Loc: time.Local, cursor: -1}
}

// Reset puts the cursor back on the first line and the list at its top.
func (v *Model) Reset() { v.cursor, v.offset = -1, 0 }

// SetSize sets the outer size.
func (v *Model) SetSize(w, h int) {
	v.width, v.height = w, h
	v.rebuild()
}

// SetData takes fresh contexts, keeping the cursor on the same grant or context.
func (v *Model) SetData(ctxs []Context) {
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

func (v *Model) lineKey(l grLine) string {
	c := v.ctxs[l.ctx]
	if l.grant < 0 {
		return "c\x00" + c.Name
	}
	return "g\x00" + c.Name + "\x00" + c.Grants[l.grant].Ref.Qualified()
}

func (v *Model) selectedKey() string {
	if v.cursor < 0 || v.cursor >= len(v.lines) {
		return ""
	}
	return v.lineKey(v.lines[v.cursor])
}

// Selected returns the context and, on a grant's line, the grant under the cursor.
func (v *Model) Selected() (*Context, *Grant) {
	if v.cursor < 0 || v.cursor >= len(v.lines) {
		return nil, nil
	}
	l := v.lines[v.cursor]
	c := &v.ctxs[l.ctx]
	if l.grant < 0 {
		return c, nil
	}
	return c, &c.Grants[l.grant]
}

// when formats a time of the view.
func (v *Model) when(t time.Time) string {
	if t.IsZero() {
		return "at an unknown time"
	}
	return t.In(v.Loc).Format("Jan 2 15:04:05")
}

// contextTitle names a context: the person, or an agent's token with the client
// name it last gave (escaped) and the context's key.
func (v *Model) contextTitle(c Context) string {
	st := v.St
	if c.Name == model.PersonContext {
		return st.Title.Render("you") + st.Muted.Render(" · your own calls in this TUI")
	}
	if tok, ok := strings.CutPrefix(c.Name, "token:"); ok {
		// The token is who the agent is; the client name is what the last agent
		// with it called itself (any holder of the token may choose it).
		s := st.Title.Render("token ") + common.Inline(st, tok, 32)
		if c.Client != "" {
			s += st.Muted.Render(" · client ") + common.Inline(st, c.Client, 32)
		}
		return s + st.Muted.Render(" · context "+common.Inline(st, c.Name, 48))
	}
	client := c.Client
	if client == "" {
		client = agentNameOf(c.Name)
	}
	return st.Title.Render("agent ") + common.Inline(st, client, 32) + st.Muted.Render(" · context "+common.Inline(st, c.Name, 48))
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

// taintText says how a context was tainted: by which call, channel and server,
// when; the tool's name is cut to 40 cells in the view's one-line rows.
func (v *Model) taintText(t trust.Taint) string { return v.taintTextCut(t, 40) }

// taintTextCut is taintText with the tool's name cut to nameW cells, whole when
// nameW is 0 (a question wraps it).
func (v *Model) taintTextCut(t trust.Taint, nameW int) string {
	st := v.St
	if !t.Tainted() {
		return st.OKText.Render("● clean")
	}
	ch := t.Channel
	if ch == "" {
		ch = trust.ChannelResult
	}
	s := "⚠ tainted by " + common.Inline(st, t.By.Qualified(), nameW) + " (its " + ch + ")"
	if t.CallID != "" {
		s += " · call " + common.Inline(st, t.CallID, 16)
	}
	return st.WarnText.Render(s) + st.Muted.Render(" · "+v.when(t.At))
}

func (v *Model) rebuild() {
	st := v.St
	iw, _ := common.PaneInner(v.width, v.height)
	v.lines = v.lines[:0]
	add := func(l grLine) { v.lines = append(v.lines, l) }
	for ci, c := range v.ctxs {
		if ci > 0 {
			add(grLine{ctx: ci, grant: -1})
		}
		add(grLine{text: v.contextTitle(c), ctx: ci, grant: -1, selectable: true})
		add(grLine{text: "  " + v.taintText(c.Taint), ctx: ci, grant: -1})
		if len(c.Grants) == 0 {
			add(grLine{text: st.Muted.Render("  no grants: every call that asks, asks"), ctx: ci, grant: -1})
		}
		for gi, g := range c.Grants {
			scope := g.Scope
			if scope == "" {
				scope = "the whole tool"
			}
			add(grLine{text: "✓ " + common.Inline(st, g.Ref.Qualified(), max(iw/2, 20)) + st.Muted.Render(" · "+scope), ctx: ci, grant: gi, selectable: true})
			// Who granted it, as the sentence every screen says (never the log's value).
			by := common.PlainInline(model.DecidedSentence(trust.Allow, trust.DecidedBy(g.By)))
			if g.CallID != "" {
				by += " (call " + common.Inline(st, g.CallID, 16) + ")"
			}
			policy := "the tier's default policy"
			if g.Policy != trust.ActionUnset {
				policy = "tool policy " + g.Policy.String()
			}
			fp := g.Fingerprint
			if len(fp) > 12 {
				fp = fp[:12]
			}
			add(grLine{text: st.Muted.Render("      granted " + v.when(g.At) + " · " + by), ctx: ci, grant: gi})
			add(grLine{text: st.Muted.Render("      while " + g.Tier.String() + " · server " + g.Trust.String() + " · " + policy + " · sha256 " + fp), ctx: ci, grant: gi})
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
	v.offset = list.ScrollTo(v.offset, v.cursor, v.next(0, 1), v.visible(), len(v.lines), 2) // a grant's other lines stay in view
}

func (v *Model) updateKeys() {
	c, g := v.Selected()
	first, last := v.next(0, 1), v.next(len(v.lines)-1, -1)
	v.keys.Revoke.SetEnabled(g != nil)
	v.keys.ClearTaint.SetEnabled(c != nil && c.Taint.Tainted())
	v.keys.ScrollKeyMap.Enable(v.cursor > first, v.cursor >= 0 && v.cursor < last)
}

// Revoke asks the root to revoke Grant, at once: it only makes the next call of
// that tool in that context ask again.
type Revoke struct{ Grant Grant }

// ClearTaint asks the root to ask whether to clear Context's taint; Lines are
// the question's body (the context and its taint, unstyled).
type ClearTaint struct {
	Context Context
	Lines   []string
}

// Update handles a key; revoking and clearing ask for what is selected after it.
func (v *Model) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil, nil
	}
	if to, ok := list.Move(k, v.keys.ScrollKeyMap, v.cursor, len(v.lines), v.visible(), func(i int) bool { return v.lines[i].selectable }); ok {
		v.cursor = to
	}
	v.clamp()
	v.updateKeys()
	c, g := v.Selected()
	switch {
	case key.Matches(k, v.keys.Back):
		return screen.Back{}, nil
	case key.Matches(k, v.keys.Revoke):
		if g != nil {
			return Revoke{Grant: *g}, nil
		}
	case key.Matches(k, v.keys.ClearTaint):
		if c != nil && c.Taint.Tainted() {
			return ClearTaint{Context: *c, Lines: []string{ansi.Strip(v.contextTitle(*c)), ansi.Strip(v.taintTextCut(c.Taint, 0))}}, nil
		}
	}
	return nil, nil
}

// View renders the heading and the visible lines in a pane.
func (v *Model) View() string {
	st := v.St
	iw, _ := common.PaneInner(v.width, v.height)
	n := 0
	for _, c := range v.ctxs {
		n += len(c.Grants)
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

// KeyMap returns the bindings that apply now, for the footer.
func (v *Model) KeyMap() help.KeyMap {
	return common.KeyMapFunc{Short: v.keys.ShortHelp(), Full: v.keys.FullHelp()}
}
