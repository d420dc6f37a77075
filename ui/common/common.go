package common

import "github.com/airlock-mcp/airlock/ui/theme"

// Common is what the root shares with every screen. The root holds one and every
// screen the same pointer, so a new theme (light or dark, found after start) is
// one assignment: St. A screen that keeps renderings made with the styles still
// redraws them when the root tells it to.
type Common struct {
	// St is the styles of the current theme.
	St *theme.Styles
}
