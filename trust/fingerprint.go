package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/airlock-mcp/airlock/internal/jsonlex"
)

// MaxCanonicalDepth is the deepest nesting of arrays and objects Canonical accepts. A
// real tool schema is a few levels deep; the bound keeps a hostile one from costing
// unbounded stack.
const MaxCanonicalDepth = 256

// ErrTooDeep is returned (wrapped) by Canonical and ToolFingerprint when the JSON nests
// deeper than MaxCanonicalDepth.
var ErrTooDeep = errors.New("json nests too deeply")

// Canonical returns raw, which must be exactly one JSON value, in a canonical form:
// object members sorted by key, no insignificant whitespace, numbers kept as their
// original literal (1.0 and 1 stay different), and strings re-encoded the way
// encoding/json writes them but without HTML escaping (so "<" stays "<").
//
// Keys are ordered by the bytes of their decoded UTF-8 strings (Go's string order, not
// RFC 8785's UTF-16 order), which is stable and enough for a fingerprint. An object
// that repeats a key keeps every member, in the order received among equal keys, so a
// change to either copy changes the result. As in encoding/json, invalid UTF-8 inside
// a string decodes as U+FFFD, which is also what every Go MCP client sees.
//
// It returns an error for malformed JSON, for trailing data after the value, and
// (wrapping ErrTooDeep) for nesting deeper than MaxCanonicalDepth.
func Canonical(raw json.RawMessage) ([]byte, error) {
	c := canonPool.Get().(*canonicaliser)
	defer c.release()
	out, err := c.run(raw, make([]byte, 0, len(raw)))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// The canonicaliser reads the bytes once, front to back, and writes the canonical
// form as it goes: scalars are copied (numbers) or transcoded (strings) straight into
// the output. An object's members are written in the order received, each span
// noted with its decoded key; when the object closes, and only if the keys are out
// of order, the spans are stably sorted and the object's bytes rearranged once
// through a scratch buffer. Nothing is allocated per token, and the buffers live in
// a pool, so a typical tool costs one output buffer (none for ToolFingerprint).
//
// Its acceptance is encoding/json's Decoder: the JSON grammar of RFC 8259, only
// space, tab, CR and LF as whitespace, raw control characters refused inside
// strings, bytes that are not UTF-8 accepted there and read as U+FFFD (one per byte,
// as utf8.DecodeRune reads them), and a \u escape of a lone or misordered surrogate
// read as U+FFFD. The old token-by-token implementation is kept in
// canonical_oracle_test.go and the tests compare the two.
type canonicaliser struct {
	src     []byte
	i       int
	out     []byte
	keys    []byte      // decoded keys of the objects being read, a stack
	members []canonSpan // members of the objects being read, a stack
	scratch []byte      // where an out-of-order object is rearranged
	own     []byte      // ToolFingerprint's output buffer, kept between calls
}

func (c *canonicaliser) scratchOut() []byte { return c.own[:0] }
func (c *canonicaliser) keepOut(out []byte) { c.own = out }

// canonSpan is one object member: its decoded key in keys and its bytes (key, colon
// and value, without the comma) in out.
type canonSpan struct {
	k0, k1, m0, m1 int
}

var canonPool = sync.Pool{New: func() any { return new(canonicaliser) }}

// release returns c to the pool unless one hostile value grew its buffers past what
// is worth keeping.
func (c *canonicaliser) release() {
	c.src, c.out = nil, nil
	if cap(c.keys) > 1<<16 || cap(c.members) > 1<<12 || cap(c.scratch) > 1<<20 || cap(c.own) > 1<<20 {
		return
	}
	canonPool.Put(c)
}

var errCanonEOF = errors.New("unexpected end of JSON input")

// AppendCanonical appends Canonical(raw) to out, raw read as a value nested depth
// levels inside the document it belongs to: the MaxCanonicalDepth bound counts from
// that document's top, so a part made canonical on its own is accepted exactly when
// the whole document would be, and comes out as it would inside it. On an error it
// returns out as it was.
func AppendCanonical(out []byte, raw json.RawMessage, depth int) ([]byte, error) {
	c := canonPool.Get().(*canonicaliser)
	defer c.release()
	res, err := c.runAt(raw, out, depth)
	if err != nil {
		return out, err
	}
	return res, nil
}

// run appends the canonical form of src to out.
func (c *canonicaliser) run(src, out []byte) ([]byte, error) { return c.runAt(src, out, 0) }

// runAt is run for src nested depth levels inside its document.
func (c *canonicaliser) runAt(src, out []byte, depth int) ([]byte, error) {
	c.src, c.i, c.out = src, 0, out
	c.keys, c.members = c.keys[:0], c.members[:0]
	c.space()
	if err := c.value(depth); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	c.space()
	if c.i != len(c.src) {
		return nil, errors.New("canonical json: trailing data after the value")
	}
	return c.out, nil
}

func (c *canonicaliser) space() { c.i = jsonlex.Space(c.src, c.i) }

// fail is the error for the lexer's e at c.i: what says where it was.
func (c *canonicaliser) fail(e jsonlex.Err, what string) error {
	if e == jsonlex.EOF || c.i >= len(c.src) {
		return errCanonEOF
	}
	return c.syntax(what)
}

func (c *canonicaliser) syntax(what string) error {
	if c.i >= len(c.src) {
		return errCanonEOF
	}
	return fmt.Errorf("invalid character %q %s at byte %d", c.src[c.i], what, c.i)
}

// value reads one value at c.i (whitespace already skipped) at nesting depth.
func (c *canonicaliser) value(depth int) error {
	if c.i >= len(c.src) {
		return errCanonEOF
	}
	switch b := c.src[c.i]; b {
	case '{', '[':
		if depth >= MaxCanonicalDepth {
			return fmt.Errorf("%w: more than %d levels", ErrTooDeep, MaxCanonicalDepth)
		}
		if b == '[' {
			return c.array(depth)
		}
		return c.object(depth)
	case '"':
		return c.str(false)
	case 't':
		return c.literal("true")
	case 'f':
		return c.literal("false")
	case 'n':
		return c.literal("null")
	default:
		if b == '-' || b >= '0' && b <= '9' {
			return c.number()
		}
		return c.syntax("looking for beginning of value")
	}
}

func (c *canonicaliser) literal(lit string) error {
	end, e := jsonlex.Literal(c.src, c.i, lit)
	c.i = end
	if e != jsonlex.OK {
		return c.fail(e, "in literal "+lit)
	}
	c.out = append(c.out, lit...)
	return nil
}

// number copies a number literal as written, after checking it against the grammar.
func (c *canonicaliser) number() error {
	start := c.i
	end, e := jsonlex.Number(c.src, c.i)
	c.i = end
	if e != jsonlex.OK {
		return c.fail(e, "in numeric literal")
	}
	c.out = append(c.out, c.src[start:end]...)
	return nil
}

func (c *canonicaliser) array(depth int) error {
	c.i++ // '['
	c.out = append(c.out, '[')
	c.space()
	if c.i < len(c.src) && c.src[c.i] == ']' {
		c.i++
		c.out = append(c.out, ']')
		return nil
	}
	for {
		if err := c.value(depth + 1); err != nil {
			return err
		}
		c.space()
		if c.i >= len(c.src) {
			return errCanonEOF
		}
		switch c.src[c.i] {
		case ',':
			c.i++
			c.out = append(c.out, ',')
			c.space()
		case ']':
			c.i++
			c.out = append(c.out, ']')
			return nil
		default:
			return c.syntax("after array element")
		}
	}
}

func (c *canonicaliser) object(depth int) error {
	c.i++ // '{'
	c.out = append(c.out, '{')
	c.space()
	if c.i < len(c.src) && c.src[c.i] == '}' {
		c.i++
		c.out = append(c.out, '}')
		return nil
	}
	base, keyBase, start := len(c.members), len(c.keys), len(c.out)
	for {
		if c.i >= len(c.src) {
			return errCanonEOF
		}
		if c.src[c.i] != '"' {
			return c.syntax("looking for beginning of object key string")
		}
		m := canonSpan{k0: len(c.keys), m0: len(c.out)}
		if err := c.str(true); err != nil {
			return err
		}
		m.k1 = len(c.keys)
		c.space()
		if c.i >= len(c.src) {
			return errCanonEOF
		}
		if c.src[c.i] != ':' {
			return c.syntax("after object key")
		}
		c.i++
		c.out = append(c.out, ':')
		c.space()
		if err := c.value(depth + 1); err != nil {
			return err
		}
		m.m1 = len(c.out)
		c.members = append(c.members, m)
		c.space()
		if c.i >= len(c.src) {
			return errCanonEOF
		}
		if c.src[c.i] == '}' {
			c.i++
			break
		}
		if c.src[c.i] != ',' {
			return c.syntax("after object key:value pair")
		}
		c.i++
		c.out = append(c.out, ',')
		c.space()
	}
	c.sortMembers(c.members[base:], start)
	c.out = append(c.out, '}')
	c.members, c.keys = c.members[:base], c.keys[:keyBase]
	return nil
}

// sortMembers puts the members ms, written from out[start:] in the order received,
// in the order of their decoded keys, keeping equal keys in the order received.
func (c *canonicaliser) sortMembers(ms []canonSpan, start int) {
	key := func(m canonSpan) []byte { return c.keys[m.k0:m.k1] }
	sorted := true
	for j := 1; j < len(ms); j++ {
		if bytes.Compare(key(ms[j-1]), key(ms[j])) > 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	slices.SortStableFunc(ms, func(a, b canonSpan) int { return bytes.Compare(key(a), key(b)) })
	c.scratch = append(c.scratch[:0], c.out[start:]...)
	w := start
	for j, m := range ms {
		if j > 0 {
			c.out[w] = ','
			w++
		}
		w += copy(c.out[w:], c.scratch[m.m0-start:m.m1-start])
	}
}

// str reads the string at c.i and writes it the way encoding/json's Encoder writes
// the decoded string with HTML escaping off: '"', '\\' and control characters escaped
// (\b \f \n \r \t, else \u00xx), U+2028 and U+2029 as \u2028 and \u2029, every
// other character as itself. When key is set, the decoded string is also appended
// to c.keys, for sorting.
func (c *canonicaliser) str(key bool) error {
	c.i++ // '"'
	c.out = append(c.out, '"')
	src := c.src
	for {
		// The run of bytes that need nothing: printable ASCII other than '"' and '\\'.
		j := jsonlex.PlainEnd(src, c.i)
		c.out = append(c.out, src[c.i:j]...)
		if key {
			c.keys = append(c.keys, src[c.i:j]...)
		}
		if j < len(src) && src[j] == '"' {
			c.i = j + 1
			c.out = append(c.out, '"')
			return nil
		}
		if j < len(src) && src[j] >= utf8.RuneSelf {
			// A character that is valid UTF-8 and not U+2028 or U+2029 is written
			// as the bytes it was read from, without encoding it again.
			if r, size := utf8.DecodeRune(src[j:]); size > 1 && r != '\u2028' && r != '\u2029' {
				c.out = append(c.out, src[j:j+size]...)
				if key {
					c.keys = append(c.keys, src[j:j+size]...)
				}
				c.i = j + size
				continue
			}
		}
		r, next, e := jsonlex.Char(src, j)
		c.i = next
		if e == jsonlex.EOF {
			return errCanonEOF
		}
		if e != jsonlex.OK {
			return c.syntax(stringWhere(src, j, next))
		}
		if r == jsonlex.Quote {
			c.out = append(c.out, '"')
			return nil
		}
		// An escape, U+2028 or U+2029, or a byte that is not UTF-8 (read as
		// U+FFFD) is written the way the Encoder writes it.
		c.rune(r, key)
	}
}

// stringWhere names the part of a string where the lexer stopped at src[at] after
// the character that starts at src[j]: encoding/json's words.
func stringWhere(src []byte, j, at int) string {
	switch {
	case src[j] != '\\':
		return "in string literal"
	case at == j+1:
		return "in string escape code"
	}
	return "in \\u hexadecimal character escape"
}

const lowerHex = "0123456789abcdef"

// rune writes the decoded character r the way encoding/json's Encoder writes it, and
// appends it as UTF-8 to c.keys when key is set.
func (c *canonicaliser) rune(r rune, key bool) {
	if key {
		c.keys = utf8.AppendRune(c.keys, r)
	}
	c.out = appendCanonicalRune(c.out, r)
}

// appendCanonicalRune appends the decoded character r as Canonical writes it: '"',
// '\\' and control characters escaped (\b \f \n \r \t, else \u00xx), U+2028 and
// U+2029 as \u2028 and \u2029, every other character as its UTF-8.
func appendCanonicalRune(out []byte, r rune) []byte {
	switch {
	case r == '"' || r == '\\':
		return append(out, '\\', byte(r))
	case r == '\b':
		return append(out, '\\', 'b')
	case r == '\f':
		return append(out, '\\', 'f')
	case r == '\n':
		return append(out, '\\', 'n')
	case r == '\r':
		return append(out, '\\', 'r')
	case r == '\t':
		return append(out, '\\', 't')
	case r < 0x20:
		return append(out, '\\', 'u', '0', '0', lowerHex[r>>4], lowerHex[r&0xF])
	case r == '\u2028' || r == '\u2029':
		return append(out, '\\', 'u', '2', '0', '2', lowerHex[r&0xF])
	}
	return utf8.AppendRune(out, r)
}

// AppendCanonicalString appends the JSON string encoding/json writes for s as
// Canonical would rewrite it: each character as appendCanonicalRune writes it, a
// byte that is not UTF-8 as U+FFFD (encoding/json's \ufffd, decoded). So a
// document built of such strings, and of parts AppendCanonical made, in sorted key
// order needs no second pass through Canonical.
func AppendCanonicalString(out []byte, s string) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] >= 0x20 && s[j] < utf8.RuneSelf && s[j] != '"' && s[j] != '\\' {
			j++
		}
		out = append(out, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if size > 1 && r != '\u2028' && r != '\u2029' {
			out = append(out, s[i:i+size]...) // valid UTF-8, written as it is
		} else {
			out = appendCanonicalRune(out, r) // an escape, or RuneError for a byte that is not UTF-8
		}
		i += size
	}
	return append(out, '"')
}

// ToolFingerprint returns the lowercase hex SHA-256 of Canonical(raw), where raw is the
// whole tool object exactly as the server sent it (name, title, description,
// inputSchema, outputSchema, annotations, _meta). Reordering object keys or changing
// whitespace keeps the fingerprint; any change of content changes it. The error is
// Canonical's.
func ToolFingerprint(raw json.RawMessage) (string, error) {
	c := canonPool.Get().(*canonicaliser)
	defer c.release()
	out, err := c.run(raw, c.scratchOut())
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(out)
	c.keepOut(out)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:]), nil
}

// InstructionsFingerprint returns the lowercase hex SHA-256 of the server's
// instructions string, byte for byte.
func InstructionsFingerprint(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
