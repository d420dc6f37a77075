// Package tomlw writes the small pieces of TOML airlock prints for a person to paste
// or append to a config: keys (bare when TOML allows, else quoted), basic strings,
// arrays of strings and table headers. Every piece it writes parses back, with any
// TOML reader, to exactly the text it was given, except that invalid UTF-8 is
// replaced by U+FFFD (never refused: the output is always valid TOML).
//
// Invariants: no output holds a raw control character, newline, bidi control or
// zero-width joiner, so a server- or source-controlled name can leave neither its
// string nor a comment it is shown in, and cannot move a terminal's cursor. Two styles
// say which characters stay as they are:
//
//   - Printable (the importer's output, fix hints): printable Unicode stays (café),
//     \t \n \r are written short, everything else outside printable ASCII that is not
//     printable (controls, C1, bidi and zero-width marks, non-ASCII spaces) is \uXXXX
//     or \UXXXXXXXX; each invalid byte becomes one \uFFFD.
//   - ASCII (the what-if export): only printable ASCII stays; every other character is
//     \uXXXX or \UXXXXXXXX, \t and \n included; each run of invalid bytes becomes one
//     \uFFFD.
package tomlw

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Style is which characters a string keeps as they are (see the package doc).
type Style uint8

const (
	// Printable keeps printable Unicode and escapes the rest.
	Printable Style = iota
	// ASCII keeps printable ASCII only.
	ASCII
)

// Quote is s as a TOML basic string in style st.
func (st Style) Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	prevBad := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		bad := r == utf8.RuneError && size == 1
		if bad && prevBad && st == ASCII {
			continue
		}
		prevBad = bad
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case st == Printable && r == '\t':
			b.WriteString(`\t`)
		case st == Printable && r == '\n':
			b.WriteString(`\n`)
		case st == Printable && r == '\r':
			b.WriteString(`\r`)
		case st == Printable && !bad && r >= 0x80 && visible(r):
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// visible reports whether a non-ASCII rune is shown as itself: printable, and
// neither a bidi control nor a zero-width joiner.
func visible(r rune) bool {
	return unicode.IsPrint(r) && !unicode.Is(unicode.Bidi_Control, r) && !unicode.Is(unicode.Join_Control, r)
}

// Key is k as one TOML key: bare when it is letters, digits, _ and -, else quoted.
func (st Style) Key(k string) string {
	if k != "" && !strings.ContainsFunc(k, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) {
		return k
	}
	return st.Quote(k)
}

// Dotted is the keys joined as one dotted key: servers."my tool".policy.
func (st Style) Dotted(keys ...string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = st.Key(k)
	}
	return strings.Join(parts, ".")
}

// Table is the header of the table at keys: [servers.mail].
func (st Style) Table(keys ...string) string { return "[" + st.Dotted(keys...) + "]" }

// ArrayTable is the header of an element of the array of tables at keys:
// [[servers.mail.tools.send.rules]].
func (st Style) ArrayTable(keys ...string) string { return "[[" + st.Dotted(keys...) + "]]" }

// Array is ss as a TOML array of basic strings on one line: ["a", "b"].
func (st Style) Array(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = st.Quote(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
