package ui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/pager"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// helpStyles builds the help bubble's styles from the theme, so NO_COLOR and the
// background apply to it too.
func helpStyles(st *theme.Styles) help.Styles {
	return help.Styles{
		Ellipsis:       st.Help,
		ShortKey:       st.HelpKey,
		ShortDesc:      st.Help,
		ShortSeparator: st.Muted,
		FullKey:        st.HelpKey,
		FullDesc:       st.Help,
		FullSeparator:  st.Muted,
	}
}

// footerView is the one-line help: the bindings of what has focus now, then the
// global ones. Disabled bindings are left out, so the footer is always true. When
// the line is too wide, whole bindings go from the end: bubbles' help adds an item
// that overflows when its ellipsis does not fit either, and the line was then cut
// mid-word ("q qui…").
func footerView(h help.Model, now help.KeyMap, global []key.Binding) string {
	all := append(append([]key.Binding(nil), now.ShortHelp()...), global...)
	for n := len(all); ; n-- {
		out := h.ShortHelpView(all[:n])
		if h.Width() <= 0 || n <= 1 || lipgloss.Width(out) <= h.Width() {
			return out
		}
	}
}

// helpSection is one context of the help overlay: its keys, or lines of
// airlock's own text (any server- or agent-controlled part already escaped).
type helpSection struct {
	title string
	keys  help.KeyMap
	lines []string
}

// helpOverlay lists every binding of every context, so every action is
// discoverable; bindings that do nothing at this moment are shown faint.
type helpOverlay struct {
	*common.Common
	keys          HelpKeyMap
	vp            pager.Pager
	open          bool
	width, height int
	// tourAsked is set when the person asked to restart the tour (the root starts
	// it and clears this).
	tourAsked bool
}

func newHelpOverlay(com *common.Common) helpOverlay {
	keys := DefaultHelpKeyMap()
	vp := pager.New(keys.ScrollKeyMap)
	return helpOverlay{Common: com, keys: keys, vp: vp}
}

// SetSize sets the overlay's outer size.
func (h *helpOverlay) SetSize(w, height int) {
	h.width, h.height = w, height
	iw, ih := common.PaneInner(w, height)
	h.vp.SetWidth(iw)
	h.vp.SetHeight(max(ih-1, 1))
}

// show opens the overlay on the given sections.
func (h *helpOverlay) show(sections []helpSection) {
	h.open = true
	iw, _ := common.PaneInner(h.width, h.height)
	h.vp.SetContent(helpContent(h.St, sections, iw))
	h.vp.GotoTop()
}

// Update handles keys while the overlay is open; it reports whether to close.
func (h helpOverlay) Update(msg tea.Msg) (helpOverlay, bool, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, h.keys.Close):
			h.open = false
			return h, true, nil
		case key.Matches(k, h.keys.Tour):
			h.open, h.tourAsked = false, true
			return h, true, nil
		}
	}
	var cmd tea.Cmd
	cmd = h.vp.Update(msg)
	return h, false, cmd
}

// View renders the overlay box.
func (h helpOverlay) View() string {
	iw, _ := common.PaneInner(h.width, h.height)
	head := h.St.Title.Render(common.Fit("airlock help — every key, by where it works", iw))
	lines := append([]string{head}, strings.Split(h.vp.View(), "\n")...)
	return common.PaneBox(h.St, true, h.width, h.height, lines)
}

// Glossary is the one list of airlock's words a newcomer meets first, each with
// the one meaning every screen, report and reason uses (README and
// docs/wording.md say the same).
var Glossary = [][2]string{
	{"tier", "what a tool can do: read, write, destructive, or blocked (never runs)"},
	{"trust", "whether a server's own claims about its tools are believed: trusted, untrusted, blocked"},
	{"leg", "one ingredient of a hazard: tools that read untrusted content, read private data, or can send data out"},
	{"hazard", "a risky combination of tools across the whole toolset, such as the lethal trifecta"},
	{"guarded", strings.TrimPrefix(trust.GuardedMeaning, "guarded: ")},
	{"UNGUARDED", strings.TrimPrefix(trust.UnguardedMeaning, "UNGUARDED: ")},
	{"context", "whose calls share taint and \"allow for this context\": yours, or one per agent connection"},
	{"TAINTED", "a tool that returns untrusted content ran in this context; risky calls then ask, whatever policy says"},
	{"what-if", "a change for this session only (x, p, T; one that loosens asks first); your config file is not touched unless you export (E)"},
	{"protocol", "the MCP protocol version a server speaks, named by its release date (2025-11-25)"},
	{"activity", "every call by you or an agent, and every status message (v)"},
}

func helpContent(st *theme.Styles, sections []helpSection, width int) string {
	var lines []string
	for _, s := range sections {
		if s.keys == nil {
			lines = append(lines, st.Header.Render(s.title))
			lines = append(lines, s.lines...)
			lines = append(lines, "")
			continue
		}
		var rows []string
		for _, col := range s.keys.FullHelp() {
			for _, b := range col {
				if len(b.Keys()) == 0 || b.Help().Key == "" {
					continue // unbound, such as the demo key outside the demo
				}
				row := "  " + st.HelpKey.Render(common.Fit(b.Help().Key, 10)) + " " + b.Help().Desc
				if !b.Enabled() {
					row = "  " + st.Muted.Render(common.Fit(b.Help().Key, 10)+" "+b.Help().Desc+" (not now)")
				}
				rows = append(rows, row)
			}
		}
		if len(rows) == 0 {
			continue
		}
		lines = append(lines, st.Header.Render(s.title))
		lines = append(lines, rows...)
		lines = append(lines, "")
	}
	lines = append(lines, st.Header.Render("Signs"))
	var tiers []string
	for _, t := range trust.Tiers {
		tiers = append(tiers, st.Tier(t).Render(theme.TierLabel(t)))
	}
	lines = append(lines,
		"  tiers     "+strings.Join(tiers, "  "),
		"  trust     "+trustBadge(st, trust.Trusted)+"  "+trustBadge(st, trust.Untrusted)+"  "+trustBadge(st, trust.BlockedServer),
		"  hazards   "+st.BannerCrit.Render(theme.SeverityGlyph(trust.SeverityCritical)+" critical")+"  "+st.Banner.Render(theme.SeverityGlyph(trust.SeverityHigh)+" high")+
			"  "+st.Banner.Render(theme.SeverityGlyph(trust.SeverityMedium)+" medium"),
		"  servers   ✓ ready  ✗ failed  (spinner) connecting",
		"  text      "+st.Mark.Render("⟨ESC⟩")+" marks a byte a server sent that could act on your terminal;",
		"            "+st.Gutter.Render(common.Gutter)+"starts every line of server text",
		"",
		st.Header.Render("Words (one meaning each; docs/wording.md)"),
	)
	for _, g := range Glossary {
		// Wrapped, never cut: a definition is read to the end.
		lines = append(lines, common.WrapOwn(g[1], width, "  "+st.HelpKey.Render(common.Fit(g[0], 10))+" ", strings.Repeat(" ", 13))...)
	}
	return strings.Join(lines, "\n")
}
