package theme

import (
	"fmt"
	"image/color"
	"testing"

	"charm.land/lipgloss/v2"

	"github.com/airlock-mcp/airlock/trust"
)

// colorOr is c, or def when the style leaves the colour to the terminal.
func colorOr(c, def color.Color) color.Color {
	if c == nil {
		return def
	}
	if _, none := c.(lipgloss.NoColor); none {
		return def
	}
	return c
}

func hex(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

// On a light terminal the selected row was #ddf4ff on white (1.07:1),
// invisible on a projector. WCAG 2.1 asks 3:1 for a component against what is next to
// it (1.4.11) and 4.5:1 for text (1.4.3); both themes are held to that.
func TestTheme_ContrastOfSelectedRowsStatusAndTiers(t *testing.T) {
	for _, dark := range []bool{false, true} {
		name := map[bool]string{false: "light", true: "dark"}[dark]
		st := New(dark, false)
		bg, fg := Background(dark), Foreground(dark)
		check := func(what string, a, b color.Color, min float64) {
			t.Helper()
			if got := Contrast(a, b); got < min {
				t.Errorf("%s %s: %s on %s is %.2f:1, want >= %.1f:1", name, what, hex(a), hex(b), got, min)
			}
		}
		selBG := colorOr(st.Selected.GetBackground(), bg)
		check("selected row background against the screen", selBG, bg, 3)
		check("selected row text", colorOr(st.Selected.GetForeground(), fg), selBG, 4.5)
		check("status line text", colorOr(st.StatusBar.GetForeground(), fg), bg, 4.5)
		check("muted text", colorOr(st.Muted.GetForeground(), fg), bg, 4.5)
		for _, tier := range trust.Tiers {
			check("tier "+tier.String(), colorOr(st.Tier(tier).GetForeground(), fg), bg, 3)
		}
		check("critical banner", colorOr(st.BannerCrit.GetForeground(), fg), bg, 3)
		check("banner", colorOr(st.Banner.GetForeground(), fg), bg, 3)
	}
}

func TestContrast_KnownValues(t *testing.T) {
	black, white := lipgloss.Color("#000000"), lipgloss.Color("#ffffff")
	if got := Contrast(black, white); got < 20.99 || got > 21.01 {
		t.Errorf("black/white %.3f, want 21", got)
	}
	if got := Contrast(lipgloss.Color("#ddf4ff"), white); got < 1.1 || got > 1.2 {
		t.Errorf("the old light selection #ddf4ff on white = %.2f, want about 1.14 (the issue said about 1.07)", got)
	}
}
