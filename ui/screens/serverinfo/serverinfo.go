// Package serverinfo is the server info screen (i): one server's serverInfo
// (name, version, title), the protocol it speaks, what it declares it can do,
// its instructions (server text a model reads: escaped, in the gutter), the
// notices of its listing and the tail of its stderr. It is the hub of a server's
// other channels: r asks the root to open its resources, p its prompts. The root
// hands it the server and its stderr; it never reads the model.
package serverinfo

import (
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/pager"
	"github.com/airlock-mcp/airlock/ui/screen"
	"github.com/airlock-mcp/airlock/ui/screens/hazards"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// KeyMap holds the keys of the server info view.
type KeyMap struct {
	common.ScrollKeyMap
	// Resources and Prompts open the server's resources and prompts; each is
	// enabled only while the server is ready and declares the capability.
	Resources key.Binding
	Prompts   key.Binding
	// Ping pings the server (on while it is ready); LogLevel asks it for log messages
	// from the next level up (on while it is ready and declares logging).
	Ping     key.Binding
	LogLevel key.Binding
	// Roots opens the folders the server is told of (roots/list), to add and remove.
	Roots key.Binding
	Back  key.Binding
}

// DefaultKeyMap returns the server info view's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		ScrollKeyMap: common.DefaultScrollKeyMap(),
		Resources:    key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "its resources (read, subscribe)")),
		Prompts:      key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "its prompts (fill in, get)")),
		Ping:         key.NewBinding(key.WithKeys("P"), key.WithHelp("P", "ping it: the answer's latency")),
		LogLevel:     key.NewBinding(key.WithKeys("L"), key.WithHelp("L", "its log level: the next, debug … emergency")),
		Roots:        key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "its roots, the folders it is told of: add, remove")),
		Back:         key.NewBinding(key.WithKeys("esc", "i", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap, in words short enough for 80 columns: the
// view's own keys (scrolling is in the full help, and the heading's percentage
// says there is more).
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{common.ShortKey(k.Resources, "resources"), common.ShortKey(k.Prompts, "prompts"), common.ShortKey(k.Roots, "roots"), k.Back}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Column(), {k.Resources, k.Prompts, k.Ping, k.LogLevel, k.Roots, k.Back}}
}

// maxStderrShown is how many of the kept stderr lines the info view shows (the
// logs view, l then tab, has all of them).
const maxStderrShown = 20

// Model shows one server, scrollable.
type Model struct {
	*common.Common
	keys KeyMap
	// Server is the server shown.
	Server model.ServerInfo
	// Ping is the last ping's outcome in words, LogLevel the level last asked for
	// ("" before any); the root sets both.
	Ping, LogLevel string
	stderr         []string
	vp             pager.Pane
}

// New returns the server info screen over the root's Common.
func New(com *common.Common) Model {
	keys := DefaultKeyMap()
	vp := pager.NewPane(keys.ScrollKeyMap)
	return Model{Common: com, keys: keys, vp: vp}
}

// Open shows a server from the top.
func (v *Model) Open(s model.ServerInfo, stderr []string) {
	if s.Name != v.Server.Name {
		v.Ping, v.LogLevel = "", ""
	}
	v.Server, v.stderr = s, stderr
	v.render()
	v.vp.GotoTop()
}

// Refresh shows a new state of the same server, keeping the scroll.
func (v *Model) Refresh(s model.ServerInfo, stderr []string) {
	v.Server, v.stderr = s, stderr
	v.vp.KeepScroll(v.render)
}

// SetSize sets the outer size; the content is wrapped again.
func (v *Model) SetSize(w, h int) {
	v.vp.SetSize(w, h)
	if v.Server.Name != "" {
		v.render()
	}
}

func (v *Model) render() {
	iw := v.vp.InnerWidth()
	var live []string
	if v.Ping != "" {
		live = append(live, common.WrapOwn(v.Ping, iw, v.St.Key.Render(common.Fit("ping", 12)), strings.Repeat(" ", 12))...)
	}
	if v.LogLevel != "" {
		live = append(live, common.WrapOwn(v.LogLevel+v.St.Muted.Render(" and more severe asked for; its messages show in l and H"), iw, v.St.Key.Render(common.Fit("log level", 12)), strings.Repeat(" ", 12))...)
	}
	c := Content(v.St, v.Server, v.stderr, iw)
	if len(live) > 0 {
		c = strings.Join(live, "\n") + "\n" + c
	}
	v.vp.SetContent(c)
	ready := v.Server.Status == model.StatusReady
	v.keys.Resources.SetEnabled(ready && v.Server.OffersResources)
	v.keys.Prompts.SetEnabled(ready && v.Server.OffersPrompts)
	v.keys.Ping.SetEnabled(ready)
	//lint:ignore SA1019 servers before 2026-07-28 still declare logging
	v.keys.LogLevel.SetEnabled(ready && v.Server.Capabilities != nil && v.Server.Capabilities.Logging != nil)
}

// Resources asks the root to open the resources of Server.
type Resources struct{ Server string }

// Prompts asks the root to open the prompts of Server.
type Prompts struct{ Server string }

// OpenRoots asks the root to open the roots view of Server.
type OpenRoots struct{ Server string }

// Ping asks the root to ping Server.
type Ping struct{ Server string }

// LogLevel asks the root to set Server's log level to Level.
type LogLevel struct{ Server, Level string }

// Levels are logging/setLevel's levels, least severe first.
var Levels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// nextLevel is the level after the one last asked for (debug first).
func (v *Model) nextLevel() string {
	i := slices.Index(Levels, v.LogLevel)
	if i < 0 || i+1 >= len(Levels) {
		return Levels[0]
	}
	return Levels[i+1]
}

// SetLive shows the outcome of a ping or a log level, keeping the scroll.
func (v *Model) SetLive(ping, level string) {
	if ping != "" {
		v.Ping = ping
	}
	if level != "" {
		v.LogLevel = level
	}
	v.vp.KeepScroll(v.render)
}

// Update handles keys; scrolling goes to the viewport.
func (v *Model) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, v.keys.Back):
			return screen.Back{}, nil
		case key.Matches(k, v.keys.Resources):
			return Resources{Server: v.Server.Name}, nil
		case key.Matches(k, v.keys.Prompts):
			return Prompts{Server: v.Server.Name}, nil
		case key.Matches(k, v.keys.Roots):
			return OpenRoots{Server: v.Server.Name}, nil
		case key.Matches(k, v.keys.Ping):
			return Ping{Server: v.Server.Name}, nil
		case key.Matches(k, v.keys.LogLevel):
			return LogLevel{Server: v.Server.Name, Level: v.nextLevel()}, nil
		}
	}
	return nil, v.vp.Update(msg)
}

// View renders the heading and the scrolled content in a pane.
func (v *Model) View() string {
	iw := v.vp.InnerWidth()
	head := "Server " + common.Inline(v.St, v.Server.Name, iw/2) + "  " + common.TrustBadge(v.St, v.Server.Trust) +
		v.vp.Percent(v.St)
	return v.vp.Box(v.St, head)
}

// KeyMap returns the bindings that apply now, for the footer.
func (v *Model) KeyMap() help.KeyMap {
	return common.KeyMapFunc{Short: v.keys.ShortHelp(), Full: v.keys.FullHelp()}
}

// Content renders a server for a width. Every server-controlled string is
// escaped; the instructions and stderr are wrapped in the gutter.
func Content(st *theme.Styles, s model.ServerInfo, stderr []string, width int) string {
	var lines []string
	add := func(ls ...string) { lines = append(lines, ls...) }
	field := func(name, value string) {
		add(common.WrapOwn(value, width, st.Key.Render(common.Fit(name, 12)), strings.Repeat(" ", 12))...)
	}
	section := func(name string) { add("", st.Header.Render(name)) }
	g := st.Gutter.Render(common.Gutter)

	field("server", common.Inline(st, s.Name, 0)+st.Muted.Render("  (its name in your config)"))
	switch s.Status {
	case model.StatusReady:
		field("status", st.OKText.Render("✓ ready"))
	case model.StatusFailed:
		msg := "failed"
		if s.Err != nil {
			msg = "failed: " + s.Err.Error()
		}
		field("status", st.ErrorText.Render("✗ ")+common.Inline(st, msg, 0))
	default:
		field("status", st.WarnText.Render("connecting…"))
	}
	trustText := common.TrustBadge(st, s.Trust)
	if s.TrustSource != "" {
		// The team policy set it: no what-if or config of the person's loosens it.
		trustText += st.Muted.Render("  (" + common.Inline(st, s.TrustSource, 0) + ")")
	}
	field("trust", trustText)
	if s.Blocked != "" && (s.Err == nil || !strings.Contains(s.Err.Error(), s.Blocked)) {
		// The reason is on the status row when the server failed for it.
		field("", st.ErrorText.Render("blocked: ")+common.Inline(st, s.Blocked, 0))
	}
	if s.Fence.Requested {
		field("sandbox", hazards.FenceText(st, s.Fence))
	}
	if len(s.Labels) > 0 {
		labels := make([]string, len(s.Labels))
		for i, l := range s.Labels {
			labels[i] = string(l)
		}
		field("labels", strings.Join(labels, ", "))
	}

	section("What the server says it is")
	if impl := s.Implementation; impl == nil {
		add(st.Muted.Render("(nothing yet: it has not connected)"))
	} else {
		field("name", common.OrDash(common.Inline(st, impl.Name, 0)))
		field("version", common.OrDash(common.Inline(st, impl.Version, 0)))
		if impl.Title != "" {
			field("title", common.Inline(st, impl.Title, 0))
		}
		if impl.WebsiteURL != "" {
			field("website", common.Inline(st, impl.WebsiteURL, 0))
		}
	}
	if s.Protocol != "" {
		field("protocol", common.Inline(st, s.Protocol, 0)+st.Muted.Render("  (the MCP version it speaks, by release date)"))
	}

	section("What it declares it can do")
	add(capLines(st, s.Capabilities, width)...)
	if s.OffersResources || s.OffersPrompts {
		n := func(k int, one string) string {
			if k == 1 {
				return "1 " + one
			}
			return strconv.Itoa(k) + " " + one + "s"
		}
		var offers []string
		if s.OffersResources {
			offers = append(offers, n(len(s.Resources), "resource")+" (r)", n(len(s.ResourceTemplates), "template"))
		}
		if s.OffersPrompts {
			offers = append(offers, n(len(s.Prompts), "prompt")+" (p)")
		}
		field("lists", strings.Join(offers, " · "))
	}

	section("Roots")
	switch {
	case s.Roots == nil:
		add(st.Muted.Render("none: it is told of no folders (f adds one for this session)"))
	case len(s.Roots) == 0:
		add(st.Muted.Render("an empty list (f adds one for this session)"))
	default:
		for _, r := range s.Roots {
			add("  " + common.Inline(st, RootPath(r), width-2))
		}
		add(st.Muted.Render("the folders it is told of (roots/list); f adds and removes for this session"))
	}

	section("Instructions")
	switch {
	case s.InstructionsChanged:
		add(st.ErrorText.Render("⊘ changed since pinned: ") + "its tools are blocked until you review them (airlock pins accept)")
	}
	if s.Instructions == "" {
		add(st.Muted.Render("(none)"))
	} else {
		add(common.WrapOwn(st.Muted.Render("server text: a model connected through airlock reads it as guidance"), width, "", "")...)
		add(common.BlockLines(st, s.Instructions, width, common.MaxShownBytes, g)...)
	}

	if len(s.RuleErrors) > 0 {
		// A rule that can never match makes its tool ask for every call: red, and
		// before the notices, so it is seen and fixed.
		section("Rule errors")
		for _, n := range s.RuleErrors {
			add(common.WrapOwn(st.ErrorText.Render("✗ ")+common.StyledInline(n.Text, common.MarkFn(st)), width, "", "  ")...)
		}
	}

	if len(s.Notices) > 0 {
		section("Notices")
		for _, n := range s.Notices {
			add(common.WrapOwn(common.StyledInline(n, common.MarkFn(st)), width, "• ", "  ")...)
		}
	}

	section("stderr")
	switch {
	case len(stderr) == 0:
		add(st.Muted.Render("(nothing kept: an HTTP server, or it wrote nothing)"))
	default:
		shown := stderr
		if len(shown) > maxStderrShown {
			add(st.Muted.Render("the last " + strconv.Itoa(maxStderrShown) + " of " + strconv.Itoa(len(stderr)) + " lines (l, then tab, shows all)"))
			shown = shown[len(shown)-maxStderrShown:]
		}
		for _, l := range shown {
			add(common.BlockLines(st, l, width, 4<<10, g)...)
		}
	}
	return strings.Join(lines, "\n")
}

// capLines lists the capabilities a server declared, one per line, with their
// sub-features; logging is marked deprecated (SEP-2577, 2026-07-28).
func capLines(st *theme.Styles, c *mcp.ServerCapabilities, width int) []string {
	if c == nil {
		return []string{st.Muted.Render("(nothing yet: it has not connected)")}
	}
	yes, no := st.OKText.Render("✓"), st.Muted.Render("·")
	row := func(name string, on bool, detail string) string {
		mark := no
		if on {
			mark = yes
		}
		return mark + " " + common.Fit(name, 12) + detail
	}
	feat := func(names ...string) string {
		if len(names) == 0 {
			return ""
		}
		return st.Muted.Render(strings.Join(names, " · "))
	}
	onIf := func(b bool, name string) []string {
		if b {
			return []string{name}
		}
		return nil
	}
	var out []string
	if c.Tools != nil {
		out = append(out, row("tools", true, feat(onIf(c.Tools.ListChanged, "tells when its list changes")...)))
	} else {
		out = append(out, row("tools", false, st.Muted.Render("not declared")))
	}
	if c.Resources != nil {
		out = append(out, row("resources", true, feat(append(onIf(c.Resources.Subscribe, "subscribe"), onIf(c.Resources.ListChanged, "tells when its list changes")...)...)))
	} else {
		out = append(out, row("resources", false, st.Muted.Render("not declared")))
	}
	if c.Prompts != nil {
		out = append(out, row("prompts", true, feat(onIf(c.Prompts.ListChanged, "tells when its list changes")...)))
	} else {
		out = append(out, row("prompts", false, st.Muted.Render("not declared")))
	}
	if c.Completions != nil {
		out = append(out, row("completions", true, feat("suggests values for prompt and template arguments")))
	} else {
		out = append(out, row("completions", false, st.Muted.Render("not declared")))
	}
	//lint:ignore SA1019 servers before 2026-07-28 still declare logging; the view marks it deprecated
	if c.Logging != nil {
		out = append(out, row("logging", true, st.WarnText.Render("deprecated")+feat(" in MCP 2026-07-28 (SEP-2577)")))
	} else {
		out = append(out, row("logging", false, st.Muted.Render("not declared")))
	}
	for _, extra := range []struct {
		name string
		m    map[string]any
	}{{"experimental", c.Experimental}, {"extensions", c.Extensions}} {
		if len(extra.m) == 0 {
			continue
		}
		names := make([]string, 0, len(extra.m))
		for k := range extra.m {
			names = append(names, k)
		}
		slices.Sort(names)
		out = append(out, common.WrapOwn(common.Inline(st, strings.Join(names, ", "), 0), width, yes+" "+common.Fit(extra.name, 12), strings.Repeat(" ", 14))...)
	}
	return out
}
