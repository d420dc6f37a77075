package trust

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
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
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := readCanonical(dec, 0)
	if err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("canonical json: trailing data after the value")
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := writeCanonical(&buf, enc, v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return buf.Bytes(), nil
}

// member is one object member; objects are kept as slices so repeated keys survive.
type member struct {
	key string
	val any
}

// readCanonical reads one value: json.Number, string, bool, nil, []any or []member.
func readCanonical(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	if depth >= MaxCanonicalDepth {
		return nil, fmt.Errorf("%w: more than %d levels", ErrTooDeep, MaxCanonicalDepth)
	}
	switch d {
	case '[':
		arr := []any{}
		for dec.More() {
			v, err := readCanonical(dec, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := dec.Token(); err != nil { // ']'
			return nil, err
		}
		return arr, nil
	case '{':
		obj := []member{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, ok := kt.(string)
			if !ok {
				return nil, fmt.Errorf("object key is %T, want string", kt)
			}
			v, err := readCanonical(dec, depth+1)
			if err != nil {
				return nil, err
			}
			obj = append(obj, member{key, v})
		}
		if _, err := dec.Token(); err != nil { // '}'
			return nil, err
		}
		slices.SortStableFunc(obj, func(a, b member) int { return cmp.Compare(a.key, b.key) })
		return obj, nil
	}
	return nil, fmt.Errorf("unexpected %q", rune(d))
}

func writeCanonical(buf *bytes.Buffer, enc *json.Encoder, v any) error {
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if v {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case json.Number:
		buf.WriteString(string(v))
	case string:
		return writeString(buf, enc, v)
	case []any:
		buf.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, enc, x); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case []member:
		buf.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeString(buf, enc, m.key); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := writeCanonical(buf, enc, m.val); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		return fmt.Errorf("unexpected %T", v)
	}
	return nil
}

// writeString appends s as a JSON string through enc, which writes into buf and ends
// every value with a newline that is cut off again.
func writeString(buf *bytes.Buffer, enc *json.Encoder, s string) error {
	if err := enc.Encode(s); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1)
	return nil
}

// ToolFingerprint returns the lowercase hex SHA-256 of Canonical(raw), where raw is the
// whole tool object exactly as the server sent it (name, title, description,
// inputSchema, outputSchema, annotations, _meta). Reordering object keys or changing
// whitespace keeps the fingerprint; any change of content changes it. The error is
// Canonical's.
func ToolFingerprint(raw json.RawMessage) (string, error) {
	c, err := Canonical(raw)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// InstructionsFingerprint returns the lowercase hex SHA-256 of the server's
// instructions string, byte for byte.
func InstructionsFingerprint(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
