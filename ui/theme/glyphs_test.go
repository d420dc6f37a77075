package theme

import (
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/trust"
)

// Each severity has a glyph of its own, one cell wide, so that a banner's
// glyph alone says how bad a hazard is without colour (NO_COLOR, a pasted
// transcript).
func TestSeverityGlyphsDistinct(t *testing.T) {
	seen := map[string]trust.Severity{}
	for _, s := range []trust.Severity{trust.SeverityCritical, trust.SeverityHigh, trust.SeverityMedium} {
		g := SeverityGlyph(s)
		if other, dup := seen[g]; dup {
			t.Errorf("%s and %s share the glyph %q", other, s, g)
		}
		seen[g] = s
		if w := ansi.StringWidth(g); w != 1 {
			t.Errorf("%s's glyph %q is %d cells wide", s, g, w)
		}
	}
}
