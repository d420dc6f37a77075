package theme

import (
	"image/color"
	"math"

	"charm.land/lipgloss/v2"
)

// Background is the terminal background the styles are designed against: white for
// a light terminal, GitHub's dark canvas for a dark one. Text with no colour of its
// own is drawn in Foreground.
func Background(dark bool) color.Color {
	if dark {
		return lipgloss.Color("#0d1117")
	}
	return lipgloss.Color("#ffffff")
}

// Foreground is the terminal's default text colour on Background.
func Foreground(dark bool) color.Color {
	if dark {
		return lipgloss.Color("#e6edf3")
	}
	return lipgloss.Color("#1f2328")
}

// luminance is WCAG 2's relative luminance of c.
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		s := float64(v) / 0xffff
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

// Contrast is WCAG 2's contrast ratio of two colours, from 1 to 21.
func Contrast(a, b color.Color) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}
