package safetext

import "strings"

// Inline is Escape for text that must stay on one line (a name in a table row, a
// status line): newline and tab are marked as ⟨LF⟩ and ⟨TAB⟩ too, so a hostile name
// cannot break a row or push a column.
func Inline(s string) string {
	if !strings.ContainsAny(s, "\n\t") {
		return Escape(s)
	}
	var b strings.Builder
	for {
		i := strings.IndexAny(s, "\n\t")
		if i < 0 {
			b.WriteString(Escape(s))
			return b.String()
		}
		b.WriteString(Escape(s[:i]))
		if s[i] == '\n' {
			b.WriteString("⟨LF⟩")
		} else {
			b.WriteString("⟨TAB⟩")
		}
		s = s[i+1:]
	}
}
