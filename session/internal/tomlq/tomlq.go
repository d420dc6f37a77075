// Package tomlq writes TOML keys and basic strings that can leave neither their
// string nor a comment they are shown in (printable ASCII only, every other
// character escaped), for what airlock writes as TOML: what-if exports and rules.
package tomlq

import (
	"fmt"
	"strings"
)

// Key is k as a TOML key: bare when it is letters, digits, _ and -, else a quoted
// string (String).
func Key(k string) string {
	if k != "" && !strings.ContainsFunc(k, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) {
		return k
	}
	return String(k)
}

// String is s as a TOML basic string in printable ASCII: quote and backslash
// escaped, every other character outside 0x20-0x7E written as \uXXXX or \UXXXXXXXX
// (invalid UTF-8 as U+FFFD). It holds no newline and no control, bidi or zero-width
// character, so it can leave neither its string nor a comment it is shown in.
func String(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			fmt.Fprintf(&b, "\\U%08X", r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
