// Package detail is one tool's details: what it is, its tier and why, its legs,
// policy and trust, its schema and description (escaped), and for a tool that
// changed since pinned the diff of its definition. A key asks the root to call the
// tool (Call), to accept the new definition through a guarded question (Accept), or
// to go back; the root gives it the tool and the decision to show.
package detail

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/pager"
	"github.com/airlock-mcp/airlock/ui/screen"
	"github.com/airlock-mcp/airlock/ui/screens/hazards"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// Model shows everything airlock knows about one tool, scrollable: the
// description, declared vs effective hints, every reason, legs, policy, pin state
// and both schemas.
type Model struct {
	*common.Common
	Keys KeyMap
	Tool model.ToolInfo
	// Now is what the engine would do with a call of the person's right Now.
	Now trust.Verdict
	// pinned is the pinned definition when the tool changed since pinned: the
	// "before" side of the diff the person reviews.
	pinned json.RawMessage
	// Gateway says an agent Gateway runs in this session.
	Gateway bool
	// Served is the name the gateway serves the tool under.
	Served servedName
	VP     pager.Pane
}

func New(com *common.Common) Model {
	keys := DefaultKeyMap()
	vp := pager.NewPane(keys.ScrollKeyMap)
	return Model{Common: com, Keys: keys, VP: vp}
}

// servedName is the name the gateway serves a tool under (Snapshot.ServedName),
// with the name budget it was chosen within.
type servedName struct {
	name   string
	ok     bool
	budget int
}

// ServedNameOf is t's served name in snap.
func ServedNameOf(snap *model.Snapshot, t *model.ToolInfo) servedName {
	if snap == nil {
		name, ok := trust.MapServedNames([]trust.Ref{t.Ref}, trust.DefaultNameBudget).Name(t.Ref)
		return servedName{name: name, ok: ok && t.Exposed, budget: trust.DefaultNameBudget}
	}
	name, ok := snap.ServedName(t)
	return servedName{name: name, ok: ok, budget: snap.NameBudget()}
}

// Open shows a tool from the top.
func (d *Model) Open(t model.ToolInfo, served servedName, now trust.Verdict, pinned json.RawMessage) {
	d.Tool, d.Served, d.Now, d.pinned = t, served, now, pinned
	d.Render()
	d.VP.GotoTop()
}

// ScrollToDiff scrolls the "Changed since pinned" section to the top, if the
// tool has one.
func (d *Model) ScrollToDiff() {
	for i, l := range strings.Split(d.VP.GetContent(), "\n") {
		if strings.Contains(l, diffHeading) {
			d.VP.SetYOffset(i)
			return
		}
	}
}

// diffHeading heads the diff of a tool that changed since pinned.
const diffHeading = "Changed since pinned"

// Refresh shows a new state of the same tool (a new snapshot), keeping the scroll.
func (d *Model) Refresh(t model.ToolInfo, served servedName, now trust.Verdict, pinned json.RawMessage) {
	d.Tool, d.Served, d.Now, d.pinned = t, served, now, pinned
	d.VP.KeepScroll(d.Render)
}

// SetSize sets the outer size; the content is wrapped again for the new width.
func (d *Model) SetSize(w, h int) {
	d.VP.SetSize(w, h)
	if d.Tool.Ref.Tool != "" {
		d.Render()
	}
}

func (d *Model) Render() {
	iw := d.VP.InnerWidth()
	d.VP.SetContent(DetailContent(d.St, d.Tool, d.Served, d.Now, d.pinned, d.Gateway, iw))
	d.Keys.Call.SetEnabled(d.Tool.Class.Tier != trust.TierBlocked && d.Tool.TaskSupport != common.TaskRequired)
	d.Keys.Accept.SetEnabled(d.Tool.Pin == trust.PinChanged)
}

// Call asks the root to open the call form of Tool.
type Call struct{ Tool model.ToolInfo }

// Accept asks the root to accept Tool's new definition, through a guarded
// question naming the fingerprint the person saw.
type Accept struct{ Tool model.ToolInfo }

// Update handles keys: scrolling goes to the viewport.
func (d *Model) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, d.Keys.Back):
			return screen.Back{}, nil
		case key.Matches(k, d.Keys.Call):
			return Call{Tool: d.Tool}, nil
		case key.Matches(k, d.Keys.Accept):
			return Accept{Tool: d.Tool}, nil
		}
	}
	return nil, d.VP.Update(msg)
}

// View renders the heading and the scrolled content in a pane.
func (d Model) View() string {
	iw := d.VP.InnerWidth()
	t := d.Tool
	head := "Tool " + common.Inline(d.St, t.Ref.Qualified(), iw/2) + "  " + d.St.Tier(t.Class.Tier).Render(theme.TierLabel(t.Class.Tier))
	head += d.VP.Percent(d.St)
	return d.VP.Box(d.St, head)
}

// DetailContent renders a tool's whole description for a width. Every
// server-controlled string is escaped; multi-line ones are wrapped in a gutter.
func DetailContent(st *theme.Styles, t model.ToolInfo, served servedName, now trust.Verdict, pinned json.RawMessage, gateway bool, width int) string {
	var lines []string
	add := func(ls ...string) { lines = append(lines, ls...) }
	field := func(name, value string) {
		add(common.WrapOwn(value, width, st.Key.Render(common.Fit(name, 10)), strings.Repeat(" ", 10))...)
	}
	section := func(name string) { add("", st.Header.Render(name)) }

	field("tool", common.Inline(st, t.Ref.Tool, 0))
	if t.Title != "" {
		field("title", common.Inline(st, t.Title, 0))
	}
	field("server", common.Inline(st, t.Ref.Server, 0)+"  "+common.TrustBadge(st, t.ServerTrust))
	if t.ServerEnv() != nil {
		field("env", common.Inline(st, strings.Join(t.ServerEnv(), " "), 0)+st.Muted.Render("  (names only; inherit_env adds more)"))
	}
	if f := t.ServerFence(); f.Requested {
		field("sandbox", hazards.FenceText(st, f))
	}
	if t.ServerRoots() != nil {
		roots := st.Muted.Render("none (declared, empty)")
		if len(t.ServerRoots()) > 0 {
			roots = common.Inline(st, strings.Join(t.ServerRoots(), " "), 0)
		}
		field("roots", roots)
	}
	if len(t.ServerDeprecated()) > 0 {
		field("uses", st.WarnText.Render(common.Inline(st, strings.Join(t.ServerDeprecated(), ", "), 0))+st.Muted.Render("  (deprecated by the 2026-07-28 spec)"))
	}
	field("tier", st.Tier(t.Class.Tier).Render(theme.TierLabel(t.Class.Tier)))
	policy := t.Class.Action.String()
	if t.Class.Tier == trust.TierBlocked {
		policy = "deny (blocked tools are never called)"
	}
	if trust.ClaimsReadOnly(t.Declared, t.ServerTrust) {
		field("claim", st.WarnText.Render("⚠ claims read-only")+" · ignored: "+common.Inline(st, t.Ref.Server, 0)+" is "+t.ServerTrust.String())
	}
	if h := t.Managed; h.Holds() && t.Class.Tier != trust.TierBlocked {
		// The team policy holds it: the person's rules, grants and what-if do not
		// loosen it.
		policy += st.Muted.Render("  (" + common.Inline(st, h.Source, 0) + ")")
	}
	field("policy", common.OrDash(policy))
	if h := t.Managed; h != nil && len(h.Rules) > 0 {
		srcs := make([]string, len(h.Rules))
		for i, r := range h.Rules {
			srcs[i] = strings.TrimPrefix(r.Source, "policy ")
		}
		field("", st.Muted.Render("the team policy's rules decide first: ")+common.Inline(st, strings.Join(srcs, ", "), 0))
	}
	field("now", verdictText(st, now))
	legs := make([]string, len(t.Class.Legs))
	for i, l := range t.Class.Legs {
		legs[i] = string(l)
	}
	field("legs", common.OrDash(strings.Join(legs, ", ")))
	field("pin", pinText(st, t.Pin, t.PinnedAt))
	if tt := common.TaskText(st, t.TaskSupport); tt != "" {
		field("tasks", tt)
	}
	// What an agent sees, exactly as the gateway decides it (gateway.Gateway.sync in session/gateway):
	// a blocked tool is neither listed nor callable.
	switch {
	case t.Class.Tier == trust.TierBlocked:
		field("gateway", st.WarnText.Render("not served to agents")+": a blocked tool is neither listed to them nor callable")
	case !t.Exposed:
		field("gateway", st.WarnText.Render("not served to agents")+": its name cannot be mapped safely")
	case !served.ok:
		field("gateway", st.WarnText.Render("not served to agents")+": every name within the name budget it could take is another tool's")
	case gateway:
		field("gateway", "served to agents as "+common.Inline(st, served.name, 0))
	default:
		field("gateway", "no gateway runs in this session; with --gateway, agents would see it as "+common.Inline(st, served.name, 0))
	}
	if served.ok && served.name != t.Ref.Qualified() {
		// The agent's conversation names the tool so: say why it is not its own.
		field("", st.Muted.Render("the agent calls it "+common.Inline(st, served.name, 0)+", not "+common.Inline(st, t.Ref.Qualified(), 0)+": "+trust.MappedBecause(t.Ref, served.budget)+" (agents' clients accept ^[A-Za-z0-9_-]{1,64}$ with their own prefix)"))
	}

	if t.Pin == trust.PinChanged {
		section(diffHeading)
		if len(pinned) == 0 {
			add(st.Muted.Render("(the pinned definition is not available)"))
		} else {
			add(st.Muted.Render("- pinned  + now; review every line, then A accepts the new definition"))
			add(pinDiffLines(st, pinned, t.Raw, width)...)
		}
	}

	section("Description")
	if t.Description == "" {
		add(st.Muted.Render("(none)"))
	} else {
		add(common.BlockLines(st, t.Description, width, common.MaxShownBytes, st.Gutter.Render(common.Gutter))...)
	}

	section("Hints")
	add(st.Key.Render(common.Fit("hint", 14) + common.Fit("declared", 10) + "effective"))
	d, e := t.Declared.Hints, t.Class.Effective
	hint := func(name string, decl *bool, eff bool) {
		ds := "absent"
		if decl != nil {
			ds = fmt.Sprint(*decl)
		}
		row := common.Fit(name, 14) + common.Fit(ds, 10) + fmt.Sprint(eff)
		if decl != nil && *decl != eff {
			row += st.WarnText.Render("  ≠ not taken as declared")
		}
		add(row)
	}
	hint("read_only", d.ReadOnly, e.ReadOnly)
	hint("destructive", d.Destructive, e.Destructive)
	hint("idempotent", d.Idempotent, e.Idempotent)
	hint("open_world", d.OpenWorld, e.OpenWorld)
	if t.Declared.Raw == nil {
		add(st.Muted.Render("the server sent no annotations"))
	}

	section("Why")
	if len(t.Class.Reasons) == 0 {
		add(st.Muted.Render("(no reasons given)"))
	}
	for _, r := range t.Class.Reasons {
		add(common.WrapOwn(common.StyledInline(r, common.MarkFn(st)), width, "• ", "  ")...)
	}

	section("Input schema")
	add(schemaLines(st, t.InputSchema, width)...)
	section("Output schema")
	add(schemaLines(st, t.OutputSchema, width)...)
	return strings.Join(lines, "\n")
}

func schemaLines(st *theme.Styles, schema []byte, width int) []string {
	if len(schema) == 0 || string(schema) == "null" {
		return []string{st.Muted.Render("(none)")}
	}
	return common.BlockLines(st, cli.PrettyJSON(schema), width, common.MaxShownBytes, st.Gutter.Render(common.Gutter))
}

// pinText says how the tool's definition compares with its pin.
func pinText(st *theme.Styles, p trust.PinState, at time.Time) string {
	when := ""
	if !at.IsZero() {
		when = " " + at.Format("2006-01-02 15:04")
	}
	switch p {
	case trust.PinSame:
		return st.OKText.Render("✓ same") + " as pinned" + when
	case trust.PinChanged:
		return st.ErrorText.Render("✗ CHANGED") + " since pinned" + when + ": blocked until you review it (airlock pins accept)"
	}
	return "★ new: pinned now" + when + " (trust on first use)"
}

// verdictText says what a call of the person's would meet now.
func verdictText(st *theme.Styles, v trust.Verdict) string {
	var s string
	switch v.Action {
	case trust.Allow:
		s = st.OKText.Render("✓ runs without asking")
	case trust.Ask:
		s = st.WarnText.Render("? asks you first")
	case trust.Deny:
		s = st.ErrorText.Render("⊘ denied")
	default:
		return "-"
	}
	if v.By == trust.DecidedByTaint {
		s += " (your context is tainted)"
	}
	return s
}

// KeyMap holds the keys of the tool detail view.
type KeyMap struct {
	common.ScrollKeyMap
	Call key.Binding
	// Accept pins the new definition of a tool that changed since pinned; it is
	// enabled only for such a tool and asks before it acts.
	Accept key.Binding
	Back   key.Binding
}

// DefaultKeyMap returns the detail view's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		ScrollKeyMap: common.DefaultScrollKeyMap(),
		Call:         key.NewBinding(key.WithKeys("enter", "c"), key.WithHelp("enter/c", "call")),
		Accept:       key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "accept the changed definition")),
		Back:         key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Down, k.Call, k.Accept, k.Back}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Column(), {k.Call, k.Accept, k.Back}}
}

// KeyMap returns the bindings that apply now, for the footer.
func (d Model) KeyMap() help.KeyMap {
	return common.KeyMapFunc{Short: d.Keys.ShortHelp(), Full: d.Keys.FullHelp()}
}
