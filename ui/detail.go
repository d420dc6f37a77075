package ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/pager"
	"github.com/airlock-mcp/airlock/ui/screens/hazards"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// detailView shows everything airlock knows about one tool, scrollable: the
// description, declared vs effective hints, every reason, legs, policy, pin state
// and both schemas.
type detailView struct {
	*common.Common
	keys DetailKeyMap
	tool session.ToolInfo
	// now is what the engine would do with a call of the person's right now.
	now trust.Verdict
	// pinned is the pinned definition when the tool changed since pinned: the
	// "before" side of the diff the person reviews.
	pinned json.RawMessage
	// gateway says an agent gateway runs in this session.
	gateway bool
	// served is the name the gateway serves the tool under.
	served        servedName
	vp            pager.Pager
	width, height int
}

func newDetailView(com *common.Common) detailView {
	keys := DefaultDetailKeyMap()
	vp := pager.New(keys.ScrollKeyMap)
	return detailView{Common: com, keys: keys, vp: vp}
}

// servedName is the name the gateway serves a tool under (Snapshot.ServedName),
// with the name budget it was chosen within.
type servedName struct {
	name   string
	ok     bool
	budget int
}

// servedNameOf is t's served name in snap.
func servedNameOf(snap *session.Snapshot, t *session.ToolInfo) servedName {
	if snap == nil {
		name, ok := trust.MapServedNames([]trust.Ref{t.Ref}, trust.DefaultNameBudget).Name(t.Ref)
		return servedName{name: name, ok: ok && t.Exposed, budget: trust.DefaultNameBudget}
	}
	name, ok := snap.ServedName(t)
	return servedName{name: name, ok: ok, budget: snap.NameBudget()}
}

// open shows a tool from the top.
func (d *detailView) open(t session.ToolInfo, served servedName, now trust.Verdict, pinned json.RawMessage) {
	d.tool, d.served, d.now, d.pinned = t, served, now, pinned
	d.render()
	d.vp.GotoTop()
}

// scrollToDiff scrolls the "Changed since pinned" section to the top, if the
// tool has one.
func (d *detailView) scrollToDiff() {
	for i, l := range strings.Split(d.vp.GetContent(), "\n") {
		if strings.Contains(l, diffHeading) {
			d.vp.SetYOffset(i)
			return
		}
	}
}

// diffHeading heads the diff of a tool that changed since pinned.
const diffHeading = "Changed since pinned"

// refresh shows a new state of the same tool (a new snapshot), keeping the scroll.
func (d *detailView) refresh(t session.ToolInfo, served servedName, now trust.Verdict, pinned json.RawMessage) {
	y := d.vp.YOffset()
	d.tool, d.served, d.now, d.pinned = t, served, now, pinned
	d.render()
	d.vp.SetYOffset(y)
}

// SetSize sets the outer size; the content is wrapped again for the new width.
func (d *detailView) SetSize(w, h int) {
	d.width, d.height = w, h
	iw, ih := common.PaneInner(w, h)
	d.vp.SetWidth(iw)
	d.vp.SetHeight(max(ih-1, 1))
	if d.tool.Ref.Tool != "" {
		d.render()
	}
}

func (d *detailView) render() {
	iw, _ := common.PaneInner(d.width, d.height)
	d.vp.SetContent(detailContent(d.St, d.tool, d.served, d.now, d.pinned, d.gateway, iw))
	d.keys.Call.SetEnabled(d.tool.Class.Tier != trust.TierBlocked && d.tool.TaskSupport != common.TaskRequired)
	d.keys.Accept.SetEnabled(d.tool.Pin == trust.PinChanged)
}

// detailAction is what a key in the detail view asks the root to do.
type detailAction int

const (
	detailNone detailAction = iota
	detailBack
	detailCall
	detailAccept
)

// Update handles keys: scrolling goes to the viewport.
func (d detailView) Update(msg tea.Msg) (detailView, detailAction, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, d.keys.Back):
			return d, detailBack, nil
		case key.Matches(k, d.keys.Call):
			return d, detailCall, nil
		case key.Matches(k, d.keys.Accept):
			return d, detailAccept, nil
		}
	}
	var cmd tea.Cmd
	cmd = d.vp.Update(msg)
	return d, detailNone, cmd
}

// View renders the heading and the scrolled content in a pane.
func (d detailView) View() string {
	iw, _ := common.PaneInner(d.width, d.height)
	t := d.tool
	head := "Tool " + common.Inline(d.St, t.Ref.Qualified(), iw/2) + "  " + d.St.Tier(t.Class.Tier).Render(theme.TierLabel(t.Class.Tier))
	head += d.St.Muted.Render(fmt.Sprintf("  %d%%", int(d.vp.ScrollPercent()*100)))
	lines := append([]string{d.St.Header.Render(common.Fit(head, iw))}, strings.Split(d.vp.View(), "\n")...)
	return common.PaneBox(d.St, true, d.width, d.height, lines)
}

// detailContent renders a tool's whole description for a width. Every
// server-controlled string is escaped; multi-line ones are wrapped in a gutter.
func detailContent(st *theme.Styles, t session.ToolInfo, served servedName, now trust.Verdict, pinned json.RawMessage, gateway bool, width int) string {
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
	field("policy", common.OrDash(policy))
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
