// Package wrap lays out text for airlock's dialogs and forms at a fixed width.
//
// Untrusted text (anything a server or an agent controls) goes through
// safetext first and is wrapped second, and a gutter is added to every line
// only after wrapping, so a value such as "\n✔ Approved by user" always lands
// on a line that starts with the gutter and can never pass for one of
// airlock's own lines. Nothing here drops text: every rune of the input is on
// some output line; only tabs are expanded to spaces so that widths are true.
//
// The package must never emit a byte of its input unescaped, and never wrap
// text that already carries a gutter.
package wrap

import (
	"bytes"
	"io"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

// TabWidth is how many spaces a tab in untrusted text becomes.
const TabWidth = 4

// Mark styles a run of safetext marks, such as theme.Styles.Mark.Render. A nil
// Mark leaves marks unstyled.
type Mark func(string) string

func (m Mark) apply(s string) string {
	if m == nil {
		return s
	}
	return m(s)
}

// Inline escapes untrusted text that must stay on one line, such as a tool
// name in a table: like safetext.Inline (newline and tab become ⟨LF⟩ and
// ⟨TAB⟩), with every run of marks passed through mark.
func Inline(s string, mark Mark) string {
	if !strings.ContainsAny(s, "\n\t") {
		return safetext.Styled(s, mark.apply)
	}
	var b strings.Builder
	for {
		i := strings.IndexAny(s, "\n\t")
		if i < 0 {
			b.WriteString(safetext.Styled(s, mark.apply))
			return b.String()
		}
		b.WriteString(safetext.Styled(s[:i], mark.apply))
		if s[i] == '\n' {
			b.WriteString(mark.apply("⟨LF⟩"))
		} else {
			b.WriteString(mark.apply("⟨TAB⟩"))
		}
		s = s[i+1:]
	}
}

// Escaped escapes untrusted multi-line text and breaks it into lines of at
// most width cells, breaking anywhere (not only at spaces) so that every
// character stays visible, spaces included. Marks are styled by mark; a mark
// cut by a line break keeps its style on both lines. Tabs become TabWidth
// spaces. A width below 1 is treated as 1. The result has at least one line.
func Escaped(s string, width int, mark Mark) []string {
	width = max(width, 1)
	e := safetext.Styled(strings.ReplaceAll(s, "\t", strings.Repeat(" ", TabWidth)), mark.apply)
	return hard(e, width)
}

// Gutter is Escaped with prefix added in front of every line after wrapping,
// so the lines, prefix included, are at most width cells wide. prefix is
// airlock's own text, such as "│ ", and is not escaped.
func Gutter(s string, width int, prefix string) []string {
	return GutterMarked(s, width, prefix, nil)
}

// GutterMarked is Gutter with marks styled by mark.
func GutterMarked(s string, width int, prefix string, mark Mark) []string {
	lines := Escaped(s, width-lipgloss.Width(prefix), mark)
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return lines
}

// Words word-wraps text to at most width cells per line at spaces
// (common.WrapWords: never at a hyphen inside a name), breaking a word only
// when it alone is longer than the width. Use it for airlock's own sentences;
// for sentences that embed untrusted names, pass them through safetext (or
// Inline) first. Existing newlines are kept. A width below 1 is treated as 1.
func Words(s string, width int) []string { return common.WrapWords(s, width) }

// Hang word-wraps s to width with first in front of the first line and
// enough spaces in front of the others to line them up under it.
func Hang(s string, width int, first string) []string {
	return hang(first, width, func(w int) []string { return Words(s, w) })
}

// HangChars breaks already escaped (and possibly styled) text at width cells
// like Escaped does, keeping every character, with first in front of the
// first line and spaces of the same width in front of the others. Use it for
// an untrusted value beside airlock's own label; escape the value first.
func HangChars(escaped string, width int, first string) []string {
	return hang(first, width, func(w int) []string {
		return hard(strings.ReplaceAll(escaped, "\t", strings.Repeat(" ", TabWidth)), w)
	})
}

// hang breaks text with brk at what is left of width beside first, puts
// first in front of the first line and spaces of its width in front of the
// others.
func hang(first string, width int, brk func(width int) []string) []string {
	fw := lipgloss.Width(first)
	lines := brk(max(width-fw, 1))
	pad := strings.Repeat(" ", fw)
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = pad + lines[i]
		}
	}
	return lines
}

// hard breaks styled text at width cells regardless of word boundaries,
// keeping every space, and carries styles across the breaks.
func hard(styled string, width int) []string {
	wrapped := ansi.Hardwrap(styled, width, true)
	if strings.Contains(styled, "\x1b") {
		var buf bytes.Buffer
		w := lipgloss.NewWrapWriter(&buf)
		_, _ = io.WriteString(w, wrapped)
		_ = w.Close()
		wrapped = buf.String()
	}
	return strings.Split(wrapped, "\n")
}
