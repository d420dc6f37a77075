package common

import (
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// PaneBox draws lines inside the theme's pane border at exactly w x h cells. Lines
// are fitted to the inner width and the box is padded or cut to the inner height.
// It draws the border itself rather than through Style.Width, which would re-wrap
// every line on every frame.
func PaneBox(st *theme.Styles, focused bool, w, h int, lines []string) string {
	s := st.Pane
	if focused {
		s = st.PaneFocus
	}
	b := s.GetBorderStyle()
	edge := lipgloss.NewStyle().Foreground(s.GetBorderTopForeground())
	iw, ih := PaneInner(w, h)
	left, right := edge.Render(b.Left), edge.Render(b.Right)
	var sb strings.Builder
	sb.Grow((iw + 8) * (ih + 2))
	sb.WriteString(edge.Render(b.TopLeft + strings.Repeat(b.Top, iw) + b.TopRight))
	for i := 0; i < ih; i++ {
		sb.WriteByte('\n')
		sb.WriteString(left)
		if i < len(lines) {
			sb.WriteString(Fit(lines[i], iw))
		} else {
			sb.WriteString(strings.Repeat(" ", iw))
		}
		sb.WriteString(right)
	}
	sb.WriteByte('\n')
	sb.WriteString(edge.Render(b.BottomLeft + strings.Repeat(b.Bottom, iw) + b.BottomRight))
	return sb.String()
}

// PaneHeading is a pane's first line; the focused pane is marked with "▶" as well
// as with its border colour.
func PaneHeading(st *theme.Styles, title string, focused bool, w int) string {
	if focused {
		return st.Header.Render(Fit("▶ "+title, w))
	}
	return st.Muted.Render(Fit("  "+title, w))
}

// PaneInner returns the inside of a bordered pane of the given outer size.
func PaneInner(w, h int) (int, int) { return max(w-2, 1), max(h-2, 1) }

// TrustBadge is the trust glyph and word in the trust's style.
func TrustBadge(st *theme.Styles, t trust.ServerTrust) string {
	s := theme.TrustGlyph(t) + " " + t.String()
	switch t {
	case trust.Trusted:
		return st.OKText.Render(s)
	case trust.BlockedServer:
		return st.ErrorText.Render(s)
	}
	return st.WarnText.Render(s)
}
