package trust

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// NormalizeText returns s as a model reads it rather than as its bytes spell it, for
// matching tool names: HTML character references decoded (&#95; is _), Unicode NFKC
// (fullwidth ｓｅｎｄ＿ｅｍａｉｌ is send_email), format characters and leftover
// combining marks removed (zero-width, bidi and overlay characters hide nothing),
// Latin look-alikes from Cyrillic and Greek mapped
// to Latin (sеnd with a Cyrillic е is send; also Armenian), dash and low-line look-alikes mapped to
// '-' and '_', and markdown backslash escapes removed (send\_email is send_email).
// Case is left alone: callers fold it where they compare. Plain ASCII text without
// '\' or '&' is returned as it is, at the cost of one scan.
func NormalizeText(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == '\\' || c == '&' {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		switch {
		case r == '\\' && i+1 < len(s) && s[i+1] < utf8.RuneSelf && unicode.IsPunct(rune(s[i+1])):
			// a markdown escape: the character after it stands for itself
		case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Mn, r):
			// format characters and the combining marks NFKC could not compose
		default:
			if l, ok := confusables[r]; ok {
				r = l
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// confusables maps characters that look like the Latin letters, digits and
// punctuation of tool names to those (a small set: the Cyrillic and Greek letters
// that render like Latin ones in common fonts, and dash and low-line look-alikes
// that NFKC leaves alone).
var confusables = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'һ': 'h', 'і': 'i', 'ї': 'i', 'ј': 'j', 'к': 'k',
	'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'ѕ': 's',
	'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ɡ': 'g', 'ӏ': 'l',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P',
	'С': 'C', 'Т': 'T', 'Х': 'X', 'У': 'Y', 'І': 'I', 'Ј': 'J', 'Ѕ': 'S', 'Ԁ': 'D',
	// Greek
	'α': 'a', 'ο': 'o', 'ρ': 'p', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'τ': 't', 'υ': 'u', 'χ': 'x',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N',
	'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
	// Armenian
	'օ': 'o', 'ս': 'u', 'ո': 'n', 'հ': 'h', 'ց': 'g', 'ք': 'p',
	// Latin look-alikes
	'ı': 'i', 'ℓ': 'l', 'ɑ': 'a',
	// dashes and low lines
	'‐': '-', '‑': '-', '‒': '-', '–': '-', '—': '-', '―': '-', '−': '-', '⁃': '-',
	'‗': '_', 'ˍ': '_',
}
