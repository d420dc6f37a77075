package common

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/ui/safetext"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// MaxShownBytes bounds one shown block of server-controlled text (a description, a
// schema, a result block); the rest is counted out loud, never cut silently.
const MaxShownBytes = 64 << 10

// MaxInlineBytes bounds the input of one single-line field before it is escaped: a
// row shows at most a few hundred cells, so a 1 MB name costs nothing.
const MaxInlineBytes = 1024

// Gutter starts every line of untrusted multi-line text, so that no such line can
// pass for one of airlock's own.
const Gutter = "│ "

// Ellipsis ends text cut to fit a width.
const Ellipsis = "…"

// Inline renders server-controlled text as one line of at most width cells: every
// mark (including ⟨LF⟩ and ⟨TAB⟩) is styled, and text that does not fit ends in "…".
// width <= 0 means no width limit.
func Inline(st *theme.Styles, s string, width int) string {
	cut := 0
	s, cut = safetext.Truncate(s, MaxInlineBytes)
	out := StyledInline(s, MarkFn(st))
	if cut > 0 {
		out += Ellipsis
	}
	if width > 0 && (cut > 0 || CellWidth(out) > width) {
		out = ansi.Truncate(out, width, Ellipsis)
	}
	return out
}

// StyledInline is safetext.Styled that also marks newline and tab.
func StyledInline(s string, mark func(string) string) string {
	if !strings.ContainsAny(s, "\n\t") {
		return safetext.Styled(s, mark)
	}
	var b strings.Builder
	for {
		i := strings.IndexAny(s, "\n\t")
		if i < 0 {
			b.WriteString(safetext.Styled(s, mark))
			return b.String()
		}
		b.WriteString(safetext.Styled(s[:i], mark))
		if s[i] == '\n' {
			b.WriteString(mark("⟨LF⟩"))
		} else {
			b.WriteString(mark("⟨TAB⟩"))
		}
		s = s[i+1:]
	}
}

// Summary is the first line of a description for a one-line row, with "…" when
// there is more.
func Summary(s string) (string, bool) {
	s = strings.TrimLeft(s, " \n")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimRight(s[:i], " "), true
	}
	return s, false
}

// BlockLines renders server-controlled multi-line text for a width, as lines: it is
// limited to maxBytes ("… N more bytes"), escaped with styled marks, wrapped to the
// width left beside the caller-rendered gutter g (of any width), and then every line
// is prefixed with the gutter. Wrapping comes first so that no wrapped line can
// escape the gutter.
func BlockLines(st *theme.Styles, s string, width, maxBytes int, g string) []string {
	s = safetext.Limit(s, maxBytes)
	e := safetext.Styled(s, MarkFn(st))
	// Tabs would move the cursor to a tab stop the layout does not know about.
	e = strings.ReplaceAll(e, "\t", "    ")
	inner := max(width-lipgloss.Width(g), 8)
	lines := strings.Split(ansi.Wrap(e, inner, ""), "\n")
	for i, l := range lines {
		lines[i] = g + l
	}
	return lines
}

// WrapOwn wraps airlock's own text (which may hold already-escaped, styled pieces)
// to width with a hanging indent for continuation lines. No line is wider than
// width (a line the pane cut would lose its last cells): where a continuation,
// indented more than the first line, would not fit beside its indent, the text
// is wrapped to what is left beside the wider of the two.
func WrapOwn(s string, width int, first, rest string) []string {
	wf, wr := lipgloss.Width(first), lipgloss.Width(rest)
	lines := WrapWords(s, max(width-wf, 8))
	if wr > wf && len(lines) > 1 {
		for _, l := range lines[1:] {
			if wr+ansi.StringWidth(l) > max(width, wr+8) {
				lines = WrapWords(s, max(width-wr, 8))
				break
			}
		}
	}
	for i, l := range lines {
		if i == 0 {
			lines[i] = first + l
		} else {
			lines[i] = rest + l
		}
	}
	return lines
}

// CellWidth is ansi.StringWidth with a fast path for printable ASCII, where every
// byte is one cell.
func CellWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// Fit pads or cuts s (which may hold styles) to exactly width cells.
func Fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := CellWidth(s)
	if w > width {
		return ansi.Truncate(s, width, Ellipsis)
	}
	return s + strings.Repeat(" ", width-w)
}

// OrDash returns s, or "-" when s is empty.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// MarkFn styles a run of safetext marks with the theme's mark style.
func MarkFn(st *theme.Styles) func(string) string {
	return func(s string) string { return st.Mark.Render(s) }
}

// PlainInline is server-controlled text as one escaped line without styling, for
// cutting by cells (names): every mark stays, unstyled.
func PlainInline(s string) string {
	s, _ = safetext.Truncate(s, MaxInlineBytes)
	return StyledInline(s, func(m string) string { return m })
}

// CutName fits a name (escaped, unstyled) into width cells so that what tells it
// apart survives: a qualified name's server prefix is shortened first
// ("everything__get-resource-links" → "ev…__get-resource-links"), then the tool's
// middle gives way ("get-re…e-links"): names of one server most often share a
// beginning and differ at the end.
func CutName(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := ansi.StringWidth(s)
	if w <= width {
		return s
	}
	if i := strings.Index(s, "__"); i > 0 {
		server, tool := s[:i], s[i+2:]
		tw := ansi.StringWidth(tool)
		if keep := width - tw - 3; keep >= 1 { // server[:keep] + "…__" + tool
			return ansi.Truncate(server, keep, "") + Ellipsis + "__" + tool
		}
		if width-4 >= 6 { // one letter of the server, the tool cut in the middle
			// A server of two cells or fewer stays whole: its letter and "…"
			// would take as much room and read as a longer name.
			prefix := ansi.Truncate(server, 1, "") + Ellipsis
			if ansi.StringWidth(server) <= 2 {
				prefix = server
			}
			return prefix + "__" + CutMiddle(tool, width-2-ansi.StringWidth(prefix))
		}
		return CutMiddle(tool, width)
	}
	return CutMiddle(s, width)
}

// CutMiddle keeps the beginning and the end of s and puts "…" between them.
func CutMiddle(s string, width int) string {
	w := ansi.StringWidth(s)
	if w <= width {
		return s
	}
	if width <= 2 {
		return ansi.Truncate(s, width, "")
	}
	head := (width - 1) / 2
	tail := width - 1 - head
	return ansi.Truncate(s, head, "") + Ellipsis + ansi.TruncateLeft(s, w-tail, "")
}

// CutNames fits every name of a list into width cells with cutName, and then
// makes sure no two different names look the same: names that still collide
// keep the place where they differ and their end (CutAround).
func CutNames(names []string, width int) []string {
	out := make([]string, len(names))
	seen := map[string][]int{}
	for i, n := range names {
		out[i] = CutName(n, width)
		seen[out[i]] = append(seen[out[i]], i)
	}
	for _, idx := range seen {
		if len(idx) < 2 {
			continue
		}
		// Each keeps the place where it differs from the group's other names
		// and its end (CutAround), so that the group reads apart.
		for _, i := range idx {
			r := []rune(names[i])
			k := 0
			for _, j := range idx {
				if names[j] == names[i] {
					continue
				}
				q := []rune(names[j])
				n := 0
				for n < len(r) && n < len(q) && r[n] == q[n] {
					n++
				}
				k = max(k, n)
			}
			out[i] = CutAround(r, k, width)
		}
	}
	return out
}

// CutDistinct cuts names[i] to widths[i] cells in its middle (cutMiddle) and then
// makes sure no two different names look the same: names that still collide keep
// their start up to the first character where they differ and as much of their
// end as fits ("gith…r", "gitl…r"), or, where that start is too long, a window
// around that character and their end ("…-m…or").
func CutDistinct(names []string, widths []int) []string {
	out := make([]string, len(names))
	seen := map[string][]int{}
	for i, n := range names {
		out[i] = CutMiddle(n, widths[i])
		seen[out[i]] = append(seen[out[i]], i)
	}
	for _, idx := range seen {
		if len(idx) < 2 {
			continue
		}
		for _, i := range idx {
			// Where names[i] first differs from every other name of the group.
			r := []rune(names[i])
			k := 0
			for _, j := range idx {
				if names[j] == names[i] {
					continue
				}
				q := []rune(names[j])
				n := 0
				for n < len(r) && n < len(q) && r[n] == q[n] {
					n++
				}
				k = max(k, n)
			}
			out[i] = CutAround(r, k, widths[i])
		}
	}
	return out
}

// CutAround fits r into width cells keeping its rune k (where it differs from a
// name it would look like) and its end.
func CutAround(r []rune, k, width int) string {
	s := string(r)
	if ansi.StringWidth(s) <= width || width < 5 {
		return CutMiddle(s, width)
	}
	end := min(k+1, len(r))
	if head := string(r[:end]); ansi.StringWidth(head)+2 <= width {
		return head + Ellipsis + ansi.TruncateLeft(s, ansi.StringWidth(s)-(width-ansi.StringWidth(head)-1), "")
	}
	window := string(r[max(end-2, 0):end])
	tail := max(width-2-ansi.StringWidth(window), 1)
	return ansi.Truncate(Ellipsis+window+Ellipsis+ansi.TruncateLeft(s, max(ansi.StringWidth(s)-tail, 0), ""), width, "")
}

// WrapWords wraps s (which may hold styles) to at most width cells a line at
// spaces only: a hyphenated word or name ("claude-code",
// "everything__trigger-long-running-operation") is never split at its hyphens;
// only a single word longer than the width is broken. Existing newlines are
// kept. A width below 1 is treated as 1.
func WrapWords(s string, width int) []string {
	width = max(width, 1)
	if !strings.Contains(s, "-") {
		return strings.Split(lipgloss.Wrap(s, width, ""), "\n")
	}
	// lipgloss.Wrap (which carries styles across the breaks) always breaks
	// after a hyphen: hide the hyphens from it behind
	// a one-cell rune s does not hold, and put them back.
	hold := "\u2011" // non-breaking hyphen
	for r := rune(0xE000); strings.Contains(s, hold) && r < 0xF8FF; r++ {
		hold = string(r)
	}
	// A word longer than the width is broken anyway: it keeps its hyphens,
	// the places it breaks best.
	words := strings.Split(s, " ")
	for i, w := range words {
		if ansi.StringWidth(w) <= width {
			words[i] = strings.ReplaceAll(w, "-", hold)
		}
	}
	wrapped := lipgloss.Wrap(strings.Join(words, " "), width, "")
	return strings.Split(strings.ReplaceAll(wrapped, hold, "-"), "\n")
}
