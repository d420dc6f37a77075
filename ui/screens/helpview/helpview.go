// Package helpview is the help overlay (?): every binding of every context, the
// ones that do nothing now shown faint, the signs, and the glossary of airlock's
// words. The root hands it the sections on opening; a key asks to close it or to
// restart the guided tour (the StartTour intent), which the root carries out.
package helpview

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/pager"
	"github.com/airlock-mcp/airlock/ui/screen"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// Section is one context of the help overlay: its keys, or lines of
// airlock's own text (any server- or agent-controlled part already escaped).
type Section struct {
	Title string
	Keys  help.KeyMap
	Lines []string
}

// Model lists every binding of every context, so every action is
// discoverable; bindings that do nothing at this moment are shown faint.
type Model struct {
	*common.Common
	// Keys is the overlay's keys; the root turns Tour on in the demo.
	Keys KeyMap
	// VP is the scrolled help.
	VP pager.Pager
	// Open says the overlay is shown.
	Open          bool
	width, height int
}

// New returns the help overlay over the root's Common.
func New(com *common.Common) Model {
	keys := DefaultKeyMap()
	vp := pager.New(keys.ScrollKeyMap)
	return Model{Common: com, Keys: keys, VP: vp}
}

// SetSize sets the overlay's outer size.
func (h *Model) SetSize(w, height int) {
	h.width, h.height = w, height
	iw, ih := common.PaneInner(w, height)
	h.VP.SetWidth(iw)
	h.VP.SetHeight(max(ih-1, 1))
}

// Show opens the overlay on the given sections.
func (h *Model) Show(sections []Section) {
	h.Open = true
	iw, _ := common.PaneInner(h.width, h.height)
	h.VP.SetContent(Content(h.St, sections, iw))
	h.VP.GotoTop()
}

// StartTour asks the root to restart the guided tour; the overlay has closed.
type StartTour struct{}

// Update handles keys while the overlay is open. A key that closes it closes it
// here and says so with screen.Back (nothing is under an overlay to return to);
// the tour key closes it and asks for StartTour.
func (h *Model) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, h.Keys.Close):
			h.Open = false
			return screen.Back{}, nil
		case key.Matches(k, h.Keys.Tour):
			h.Open = false
			return StartTour{}, nil
		}
	}
	return nil, h.VP.Update(msg)
}

// KeyMap is the overlay's keys, for the footer.
func (h *Model) KeyMap() help.KeyMap { return h.Keys }

// View renders the overlay box.
func (h *Model) View() string {
	iw, _ := common.PaneInner(h.width, h.height)
	head := h.St.Title.Render(common.Fit("airlock help — every key, by where it works", iw))
	lines := append([]string{head}, strings.Split(h.VP.View(), "\n")...)
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

// Content is the overlay's text for the sections at a width.
func Content(st *theme.Styles, sections []Section, width int) string {
	// Every line fits the width, wrapped at spaces with its continuation lines
	// under its text (hang cells in: its label's width), never cut.
	fit := func(l string, hang int) []string {
		if lipgloss.Width(l) <= width {
			return []string{l}
		}
		plain := ansi.Strip(l)
		hang = max(hang, len(plain)-len(strings.TrimLeft(plain, " ")))
		return common.WrapOwn(ansi.TruncateLeft(l, hang, ""), width, ansi.Truncate(l, hang, ""), strings.Repeat(" ", hang))
	}
	var lines []string
	for _, s := range sections {
		if s.Keys == nil {
			lines = append(lines, st.Header.Render(s.Title))
			for _, l := range s.Lines {
				lines = append(lines, fit(l, 0)...)
			}
			lines = append(lines, "")
			continue
		}
		var rows []string
		for _, col := range s.Keys.FullHelp() {
			for _, b := range col {
				if len(b.Keys()) == 0 || b.Help().Key == "" {
					continue // unbound, such as the demo key outside the demo
				}
				first, desc := "  "+st.HelpKey.Render(common.Fit(b.Help().Key, 10))+" ", b.Help().Desc
				if !b.Enabled() {
					first, desc = "  "+st.Muted.Render(common.Fit(b.Help().Key, 10))+" ", st.Muted.Render(desc+" (not now)")
				}
				rows = append(rows, common.WrapOwn(desc, width, first, strings.Repeat(" ", 13))...)
			}
		}
		if len(rows) == 0 {
			continue
		}
		lines = append(lines, st.Header.Render(s.Title))
		lines = append(lines, rows...)
		lines = append(lines, "")
	}
	lines = append(lines, st.Header.Render("Signs"))
	var tiers []string
	for _, t := range trust.Tiers {
		tiers = append(tiers, st.Tier(t).Render(theme.TierLabel(t)))
	}
	signs := []string{
		"  tiers     " + strings.Join(tiers, "  "),
		"  trust     " + common.TrustBadge(st, trust.Trusted) + "  " + common.TrustBadge(st, trust.Untrusted) + "  " + common.TrustBadge(st, trust.BlockedServer),
		"  hazards   " + st.BannerCrit.Render(theme.SeverityGlyph(trust.SeverityCritical)+" critical") + "  " + st.Banner.Render(theme.SeverityGlyph(trust.SeverityHigh)+" high") +
			"  " + st.Banner.Render(theme.SeverityGlyph(trust.SeverityMedium)+" medium"),
		"  servers   ✓ ready  ✗ failed  (spinner) connecting",
		"  text      " + st.Mark.Render("⟨ESC⟩") + " marks a byte a server sent that could act on your terminal;",
		"            " + st.Gutter.Render(common.Gutter) + "starts every line of server text",
	}
	for _, l := range signs {
		lines = append(lines, fit(l, 12)...)
	}
	lines = append(lines, "")
	lines = append(lines, fit(st.Header.Render("Words (one meaning each; docs/wording.md)"), 0)...)
	for _, g := range Glossary {
		// Wrapped, never cut: a definition is read to the end.
		lines = append(lines, common.WrapOwn(g[1], width, "  "+st.HelpKey.Render(common.Fit(g[0], 10))+" ", strings.Repeat(" ", 13))...)
	}
	return strings.Join(lines, "\n")
}

// KeyMap holds the keys of the help overlay.
type KeyMap struct {
	common.ScrollKeyMap
	Close key.Binding
	// Tour restarts the guided tour; it is bound only in `airlock demo`.
	Tour key.Binding
}

// DefaultKeyMap returns the help overlay's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		ScrollKeyMap: common.DefaultScrollKeyMap(),
		Close:        key.NewBinding(key.WithKeys("esc", "?", "q"), key.WithHelp("esc/?", "close help")),
		Tour:         key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "restart the guided tour"), key.WithDisabled()),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Down, k.PageDown, k.Tour, k.Close}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Column(), {k.Tour, k.Close}}
}
