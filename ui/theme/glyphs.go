package theme

import "github.com/airlock-mcp/airlock/trust"

// TierGlyph is the glyph shown beside a tier's word and colour, so the tier is
// readable without colour (NO_COLOR, colour-blind users, a pasted transcript).
func TierGlyph(t trust.Tier) string {
	switch t {
	case trust.TierRead:
		return "○"
	case trust.TierWrite:
		return "◐"
	case trust.TierDestructive:
		return "▲"
	case trust.TierBlocked:
		return "⊘"
	}
	return "?"
}

// TierLabel is the glyph and the word, e.g. "▲ destructive".
func TierLabel(t trust.Tier) string { return TierGlyph(t) + " " + t.String() }

// SeverityGlyph marks a hazard's severity beside its word, one glyph per
// severity: a banner's glyph alone says how bad it is without colour.
func SeverityGlyph(s trust.Severity) string {
	switch s {
	case trust.SeverityCritical:
		return "‼"
	case trust.SeverityHigh:
		return "!"
	}
	return "◇"
}

// TrustGlyph marks a server's trust beside its word.
func TrustGlyph(t trust.ServerTrust) string {
	switch t {
	case trust.Trusted:
		return "✓"
	case trust.BlockedServer:
		return "⊘"
	}
	return "?"
}
