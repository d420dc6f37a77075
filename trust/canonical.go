package trust

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/airlock-mcp/airlock/internal/jsonlex"
)

// MaxArgsDepth bounds the nesting of call arguments (objects and arrays).
const MaxArgsDepth = 64

// MaxArgsLimit is the ceiling of [limits] max_args_bytes (32 MiB, four times the
// default). A call's arguments are held whole several times over while they are
// read (the gateway's body limit is the limit plus 64 KiB of envelope), made
// canonical, shown and audited, and every record of the audit log holds them
// whole: the ceiling bounds the longest record airlock writes, which is the
// longest line its readers accept. Arguments over 32 MiB could not wait for a
// person under the default max_waiting_bytes either.
const MaxArgsLimit = 32 << 20

// ArgsError is why arguments were refused; Error is a sentence a person or an agent
// can act on.
type ArgsError struct{ Msg string }

func (e *ArgsError) Error() string { return "arguments refused: " + e.Msg }

// CanonicalArgs checks a call's arguments and returns their canonical bytes: the one
// form that is shown, hashed, audited and sent. The arguments must be one JSON object
// of at most maxBytes bytes (as received; 0 means no limit), nested at most
// MaxArgsDepth deep, valid UTF-8 with no lone surrogate escapes, and without a
// duplicate key at any depth (keys compared after their escapes are resolved, so
// "ch\u0061nnel" duplicates "channel"). Empty input and a bare null (some clients
// send "arguments": null for no arguments) mean {}.
//
// The canonical form has no whitespace, object keys sorted by their UTF-16 code
// units (as RFC 8785), strings with every escape resolved and only '"', '\\' and
// control characters escaped (\b \f \n \r \t, else \u00XX), and numbers exactly as
// written (validated against the JSON grammar, never re-formatted, so no precision is
// lost). It is a fixed point: CanonicalArgs of canonical bytes returns them unchanged.
func CanonicalArgs(raw []byte, maxBytes int) ([]byte, error) {
	if maxBytes > 0 && len(raw) > maxBytes {
		return nil, &ArgsError{fmt.Sprintf("%d bytes is over the limit of %d bytes for one call's arguments", len(raw), maxBytes)}
	}
	if !utf8.Valid(raw) {
		return nil, &ArgsError{"they are not valid UTF-8"}
	}
	p := &argParser{src: raw}
	p.space()
	if rest := p.src[p.i:]; len(rest) == 0 || len(rest) <= 16 && strings.TrimRight(string(rest), " \t\r\n") == "null" {
		return []byte("{}"), nil
	}
	if p.src[p.i] != '{' {
		return nil, &ArgsError{"they must be a JSON object"}
	}
	v, err := p.value(0, "")
	if err != nil {
		return nil, &ArgsError{err.Error()}
	}
	p.space()
	if p.i != len(p.src) {
		return nil, &ArgsError{fmt.Sprintf("unexpected text after the object at byte %d", p.i)}
	}
	out := make([]byte, 0, len(raw))
	return v.append(out), nil
}

// jv is a parsed JSON value: exactly one of the fields is used, by kind.
type jv struct {
	kind byte   // '{', '[', '"', or 'l' for a literal (number, true, false, null)
	text string // the string's value, or the literal's text
	keys []string
	vals []jv
}

func (v jv) append(b []byte) []byte {
	switch v.kind {
	case '{':
		order := make([]int, len(v.keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, c int) int { return compareUTF16(v.keys[a], v.keys[c]) })
		b = append(b, '{')
		for n, i := range order {
			if n > 0 {
				b = append(b, ',')
			}
			b = appendString(b, v.keys[i])
			b = append(b, ':')
			b = v.vals[i].append(b)
		}
		return append(b, '}')
	case '[':
		b = append(b, '[')
		for i, x := range v.vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = x.append(b)
		}
		return append(b, ']')
	case '"':
		return appendString(b, v.text)
	}
	return append(b, v.text...)
}

// compareUTF16 orders a and b by their UTF-16 code units (what comparing
// utf16.Encode([]rune(a)) with that of b gives), a character at a time and without
// encoding either string. At the first character that differs, the first code units
// decide; when they are equal, both characters are past the BMP with the same high
// surrogate, and their low surrogates are in the order of the characters.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			if ua, ub := firstUnit(ra), firstUnit(rb); ua != ub {
				return cmp.Compare(ua, ub)
			}
			return cmp.Compare(ra, rb)
		}
		a, b = a[na:], b[nb:]
	}
	return cmp.Compare(len(a), len(b))
}

// firstUnit is the first UTF-16 code unit of r, a character as utf8 decodes it:
// itself in the BMP, else its high surrogate.
func firstUnit(r rune) rune {
	if r < 0x10000 {
		return r
	}
	return 0xd800 + (r-0x10000)>>10
}

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

type argParser struct {
	src []byte
	i   int
}

func (p *argParser) space() { p.i = jsonlex.Space(p.src, p.i) }

func (p *argParser) errorf(format string, a ...any) error {
	return fmt.Errorf(format+" at byte %d", append(a, p.i)...)
}

// value parses one value; path names where it is, for messages ("" is the top).
func (p *argParser) value(depth int, path string) (jv, error) {
	p.space()
	if p.i == len(p.src) {
		return jv{}, p.errorf("unexpected end of the JSON")
	}
	switch c := p.src[p.i]; {
	case c == '{' || c == '[':
		if depth >= MaxArgsDepth {
			return jv{}, p.errorf("nested deeper than %d levels", MaxArgsDepth)
		}
		if c == '{' {
			return p.object(depth+1, path)
		}
		return p.array(depth+1, path)
	case c == '"':
		s, err := p.str()
		return jv{kind: '"', text: s}, err
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		lit := ""
		switch c {
		case 't':
			lit = "true"
		case 'f':
			lit = "false"
		case 'n':
			lit = "null"
		}
		if end, e := jsonlex.Literal(p.src, p.i, lit); lit != "" && e == jsonlex.OK {
			p.i = end
			return jv{kind: 'l', text: lit}, nil
		}
		return jv{}, p.errorf("invalid JSON")
	}
}

func (p *argParser) object(depth int, path string) (jv, error) {
	p.i++ // {
	v := jv{kind: '{'}
	seen := map[string]bool{}
	p.space()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		return v, nil
	}
	for {
		p.space()
		if p.i == len(p.src) || p.src[p.i] != '"' {
			return jv{}, p.errorf("an object key must be a string")
		}
		k, err := p.str()
		if err != nil {
			return jv{}, err
		}
		kp := path + "." + k
		if path == "" {
			kp = k
		}
		if seen[k] {
			return jv{}, p.errorf("duplicate key %s", strconv.Quote(kp))
		}
		seen[k] = true
		p.space()
		if p.i == len(p.src) || p.src[p.i] != ':' {
			return jv{}, p.errorf("expected ':' after key %s", strconv.Quote(kp))
		}
		p.i++
		x, err := p.value(depth, kp)
		if err != nil {
			return jv{}, err
		}
		v.keys = append(v.keys, k)
		v.vals = append(v.vals, x)
		p.space()
		if p.i == len(p.src) {
			return jv{}, p.errorf("unexpected end of the JSON")
		}
		switch p.src[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return v, nil
		default:
			return jv{}, p.errorf("expected ',' or '}'")
		}
	}
}

func (p *argParser) array(depth int, path string) (jv, error) {
	p.i++ // [
	v := jv{kind: '['}
	p.space()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		return v, nil
	}
	for n := 0; ; n++ {
		x, err := p.value(depth, path+"["+strconv.Itoa(n)+"]")
		if err != nil {
			return jv{}, err
		}
		v.vals = append(v.vals, x)
		p.space()
		if p.i == len(p.src) {
			return jv{}, p.errorf("unexpected end of the JSON")
		}
		switch p.src[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return v, nil
		default:
			return jv{}, p.errorf("expected ',' or ']'")
		}
	}
}

// str parses a string at p.i, resolving escapes. The input is known valid UTF-8;
// a lone surrogate escape, which the lexer reads as U+FFFD, is refused.
func (p *argParser) str() (string, error) {
	p.i++ // "
	// The decoded string is never longer than its source: size the builder once.
	end := p.i
	for end < len(p.src) && p.src[end] != '"' {
		if p.src[end] == '\\' {
			end++
		}
		end++
	}
	var b strings.Builder
	b.Grow(min(end, len(p.src)) - p.i)
	for {
		// The input is valid UTF-8, so its bytes up to a quote, a backslash or a
		// control byte are the text as they are: copied in one run, not decoded and
		// encoded again a character at a time.
		j := jsonlex.RawEnd(p.src, p.i)
		b.Write(p.src[p.i:j])
		if j < len(p.src) && p.src[j] == '"' {
			p.i = j + 1
			return b.String(), nil
		}
		r, next, e := jsonlex.Char(p.src, j)
		if e != jsonlex.OK {
			return "", p.stringError(j)
		}
		p.i = next
		if r == jsonlex.Quote {
			return b.String(), nil
		}
		if r == utf8.RuneError && p.src[j] == '\\' {
			if err := p.loneSurrogate(j); err != nil {
				return "", err
			}
		}
		b.WriteRune(r)
	}
}

// stringError is the error for a string the lexer could not read on from the
// character that starts at src[j].
func (p *argParser) stringError(j int) error {
	switch {
	case j >= len(p.src) || p.src[j] == '\\' && j+1 >= len(p.src):
		p.i = len(p.src)
		return p.errorf("unterminated string")
	case p.src[j] != '\\':
		p.i = j
		return p.errorf("unescaped control character in a string")
	case p.src[j+1] != 'u':
		p.i = j + 2
		return p.errorf("invalid escape \\%c in a string", p.src[j+1])
	}
	p.i = j + 2
	if j+6 > len(p.src) {
		return p.errorf("short \\u escape")
	}
	return p.errorf("invalid \\u escape")
}

// loneSurrogate is the error for the \u escape at src[j] that the lexer read as
// U+FFFD, and p.i is past: a lone or misordered surrogate (nil for \ufffd itself).
func (p *argParser) loneSurrogate(j int) error {
	r, _ := jsonlex.Hex4(p.src[j+2 : j+6])
	if !utf16.IsSurrogate(r) {
		return nil
	}
	if r < 0xdc00 && p.i+6 <= len(p.src) && p.src[p.i] == '\\' && p.src[p.i+1] == 'u' {
		// The escape after a high surrogate was read with it and did not pair.
		if _, ok := jsonlex.Hex4(p.src[p.i+2 : p.i+6]); !ok {
			p.i += 2
			return p.errorf("invalid \\u escape")
		}
		p.i += 6
	}
	return p.errorf("lone surrogate escape \\u%04x in a string", r)
}

// number validates a JSON number at p.i and keeps its text.
func (p *argParser) number() (jv, error) {
	start := p.i
	end, e := jsonlex.Number(p.src, p.i)
	p.i = end
	if e != jsonlex.OK {
		return jv{}, p.errorf("invalid number")
	}
	return jv{kind: 'l', text: string(p.src[start:p.i])}, nil
}
