package trust

import (
	"bytes"
	"encoding/json"
	"html"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ToolText returns every text field of a raw tool definition that reaches a model
// when tools are listed, one per line: title, description, annotations.title, and
// every string anywhere in inputSchema and outputSchema (titles, descriptions, enum
// and const values, defaults, examples, comments) except the values of keywords that
// only hold identifiers (type, format, $schema, $ref, $id, pattern, required …).
// Property names are left out: they are read as argument names. The fields come in
// a fixed order (object keys sorted). A definition that is not a JSON object yields "".
func ToolText(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var top map[string]any
	if dec.Decode(&top) != nil {
		return ""
	}
	var b strings.Builder
	add := func(v any) {
		if s, ok := v.(string); ok && s != "" {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	add(top["title"])
	add(top["description"])
	if ann, ok := top["annotations"].(map[string]any); ok {
		add(ann["title"])
	}
	for _, k := range []string{"inputSchema", "outputSchema"} {
		schemaText(&b, top[k], "", 0)
	}
	return b.String()
}

// identifierKeywords are schema keywords whose string values are identifiers, not
// prose for a model.
var identifierKeywords = map[string]bool{
	"type": true, "format": true, "$schema": true, "$ref": true, "$id": true,
	"$anchor": true, "$dynamicRef": true, "$dynamicAnchor": true, "pattern": true,
	"required": true, "contentEncoding": true, "contentMediaType": true,
}

// maxTextDepth bounds the walk; a listing deeper than this is blocked anyway.
const maxTextDepth = 1000

func schemaText(b *strings.Builder, v any, key string, depth int) {
	if depth > maxTextDepth {
		return
	}
	switch x := v.(type) {
	case string:
		if x != "" && !identifierKeywords[key] {
			b.WriteString(x)
			b.WriteByte('\n')
		}
	case []any:
		for _, e := range x {
			schemaText(b, e, key, depth+1) // enum and examples items keep their keyword
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			schemaText(b, x[k], k, depth+1)
		}
	}
}

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
