// Package theme is airlock's one set of styles. Styles are built by New from whether
// the terminal background is dark and whether colour is wanted (NO_COLOR), and passed
// down to every view; there are no package-level style variables. Every colour signal
// comes with a glyph or a word (see ui.TierGlyph), so nothing depends on colour alone.
package theme

import (
	"image/color"
	"os"

	"charm.land/lipgloss/v2"

	"github.com/airlock-mcp/airlock/trust"
)

// Styles holds every style the UI uses.
type Styles struct {
	// Dark reports whether the styles were built for a dark background.
	Dark bool
	// NoColor reports whether colour is off (NO_COLOR): styles keep bold, faint and
	// reverse, never colour.
	NoColor bool

	App        lipgloss.Style
	Title      lipgloss.Style
	Pane       lipgloss.Style // an unfocused pane's border
	PaneFocus  lipgloss.Style // the focused pane's border
	Header     lipgloss.Style // a pane's heading
	Selected   lipgloss.Style // the selected row
	Muted      lipgloss.Style // secondary text
	StatusBar  lipgloss.Style
	Help       lipgloss.Style
	HelpKey    lipgloss.Style
	ErrorText  lipgloss.Style
	OKText     lipgloss.Style
	WarnText   lipgloss.Style
	Banner     lipgloss.Style // the risk banner when a hazard exists
	BannerCrit lipgloss.Style // the risk banner when a critical hazard exists
	Dialog     lipgloss.Style // a modal's frame
	DialogWarn lipgloss.Style // a destructive modal's frame
	Button     lipgloss.Style
	ButtonOn   lipgloss.Style // the focused button
	Gutter     lipgloss.Style // the gutter beside untrusted multi-line text
	Mark       lipgloss.Style // safetext marks such as ⟨ESC⟩
	Key        lipgloss.Style // a key name in tables ("server", "tier")

	tiers [len(trust.Tiers)]lipgloss.Style
}

// Tier returns the style of a tier's label.
func (s Styles) Tier(t trust.Tier) lipgloss.Style {
	if int(t) < 0 || int(t) >= len(s.tiers) {
		return lipgloss.NewStyle()
	}
	return s.tiers[t]
}

// NoColorFromEnv reports whether the NO_COLOR convention asks for no colour.
func NoColorFromEnv() bool { return os.Getenv("NO_COLOR") != "" }

// New builds the styles for a dark or light background, with or without colour.
func New(dark, noColor bool) Styles {
	ld := lipgloss.LightDark(dark)
	c := func(light, darkc string) color.Color {
		if noColor {
			return lipgloss.NoColor{}
		}
		return ld(lipgloss.Color(light), lipgloss.Color(darkc))
	}
	var (
		fg     = c("#1f2328", "#e6edf3")
		muted  = c("#59636e", "#8b949e")
		accent = c("#0969da", "#58a6ff")
		green  = c("#1a7f37", "#3fb950")
		yellow = c("#9a6700", "#d29922")
		orange = c("#bc4c00", "#f0883e")
		red    = c("#cf222e", "#f85149")
		grey   = c("#6e7781", "#6e7681")
		border = c("#d0d7de", "#30363d")
		selBG  = c("#0969da", "#316dca") // >= 3:1 against the screen, see theme_test.go
		selFG  = c("#ffffff", "#ffffff")
		markBG = c("#fff8c5", "#3b2e00")
	)
	s := Styles{Dark: dark, NoColor: noColor}
	base := lipgloss.NewStyle()
	s.App = base.Foreground(fg)
	s.Title = base.Bold(true).Foreground(accent)
	s.Pane = base.Border(lipgloss.RoundedBorder()).BorderForeground(border)
	s.PaneFocus = base.Border(lipgloss.RoundedBorder()).BorderForeground(accent)
	s.Header = base.Bold(true)
	s.Selected = base.Background(selBG).Foreground(selFG).Bold(true)
	if noColor {
		s.Selected = base.Reverse(true)
	}
	s.Muted = base.Foreground(muted).Faint(noColor)
	s.StatusBar = base.Foreground(muted)
	s.Help = base.Foreground(muted)
	s.HelpKey = base.Foreground(accent).Bold(true)
	s.ErrorText = base.Foreground(red).Bold(true)
	s.OKText = base.Foreground(green)
	s.WarnText = base.Foreground(yellow).Bold(true)
	s.Banner = base.Foreground(orange).Bold(true)
	s.BannerCrit = base.Foreground(red).Bold(true)
	s.Dialog = base.Border(lipgloss.ThickBorder()).BorderForeground(accent).Padding(0, 1)
	s.DialogWarn = base.Border(lipgloss.ThickBorder()).BorderForeground(red).Padding(0, 1)
	s.Button = base.Padding(0, 1).Foreground(fg)
	s.ButtonOn = base.Padding(0, 1).Reverse(true).Bold(true)
	s.Gutter = base.Foreground(grey)
	s.Mark = base.Foreground(orange).Background(markBG)
	if noColor {
		s.Mark = base.Reverse(true)
	}
	s.Key = base.Foreground(muted)
	s.tiers[trust.TierRead] = base.Foreground(green)
	s.tiers[trust.TierWrite] = base.Foreground(yellow)
	s.tiers[trust.TierDestructive] = base.Foreground(red).Bold(true)
	s.tiers[trust.TierBlocked] = base.Foreground(grey).Strikethrough(false).Bold(true)
	return s
}
