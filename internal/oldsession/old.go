// Package oldsession is the validation and split as they were before the lexer.
package oldsession

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// validJSON reports exactly what encoding/json's Valid reports for b: one JSON value
// with optional whitespace around it, strings without control bytes and with only
// JSON's escapes (other bytes, valid UTF-8 or not, are accepted, as Valid accepts
// them), and at most maxJSONNesting objects and arrays open at once. It walks the
// bytes once, a string's plain bytes by a table, where Valid steps a state machine
// through a function call per byte: pageReader checks every page of a stdio listing
// with it before splitting the page (a page of 1,000 tools took Valid 0.65 ms).
// TestValidJSON_SameAsEncodingJSON and FuzzValidJSON hold it to Valid.
func validJSON(b []byte) bool {
	var open [64]byte // '{' or '[' for each container open; grows past 64
	stack := open[:0]
	i := skipWS(b, 0)
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(stack) == maxJSONNesting {
				return false
			}
			stack = append(stack, c)
			i = skipWS(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' or ']': empty
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				if i = validKey(b, i); i < 0 {
					return false
				}
			}
			continue // the first member's or item's value
		case c == '"':
			if i = validString(b, i); i < 0 {
				return false
			}
		case c == 't':
			if i = validLiteral(b, i, "true"); i < 0 {
				return false
			}
		case c == 'f':
			if i = validLiteral(b, i, "false"); i < 0 {
				return false
			}
		case c == 'n':
			if i = validLiteral(b, i, "null"); i < 0 {
				return false
			}
		default:
			if i = validNumber(b, i); i < 0 {
				return false
			}
		}
		// A value ended before b[i]: close what it ends, or go on to the next one.
		for {
			i = skipWS(b, i)
			if len(stack) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := stack[len(stack)-1]
			if b[i] == top+2 { // '}' or ']'
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return false
			}
			i = skipWS(b, i+1)
			if top == '{' {
				if i = validKey(b, i); i < 0 {
					return false
				}
			}
			break
		}
	}
}

// maxJSONNesting is encoding/json's limit on objects and arrays open at once.
const maxJSONNesting = 10000

// validKey checks a member's key and colon at b[i] and returns the index of its
// value (after whitespace), or -1.
func validKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = validString(b, i); i < 0 {
		return -1
	}
	i = skipWS(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipWS(b, i+1)
}

// validString checks the string whose quote is b[i] and returns the index past its
// closing quote, or -1.
func validString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		c := b[i]
		if stringPlain[c] {
			continue
		}
		switch {
		case c == '"':
			return i + 1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		default: // a control byte
			return -1
		}
	}
	return -1
}

// stringPlain is true for the bytes a string holds as they are: not a control byte,
// a quote or a backslash.
var stringPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// validLiteral checks that b holds lit at i and returns the index past it, or -1.
func validLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// validNumber checks the number at b[i] (JSON's grammar: -?(0|[1-9]\d*)(\.\d+)?
// ([eE][+-]?\d+)?) and returns the index past it, or -1.
func validNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// digits returns the index past the decimal digits starting at b[i].
func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// splitListResponse reads msg, one valid JSON object, as a response carrying a
// tools/list page: exactly the members "jsonrpc" ("2.0"), "id" (a plain integer) and
// "result" (an object), each once; in the result, "tools" (an array) once and
// "nextCursor" (a string without escapes) at most once, every key plain ASCII and no
// other key a case variant of those two, since encoding/json would match it. The tools
// are the exact bytes of each item, as encoding/json's RawMessage holds them. Anything
// else is not ok, and is left to the old path.
func splitListResponse(msg []byte) (id []byte, page *rawPage, ok bool) {
	// One walk over the message: the result is split where it stands, not skipped
	// and walked again (each pass over a page of 1,000 tools was 0.1 ms).
	page = &rawPage{}
	seen := 0
	ok = eachMember(msg, 0, func(key []byte, i int) int {
		var bit, end int
		switch string(key) {
		case "jsonrpc":
			bit, end = 1, skipValue(msg, i)
			if string(msg[i:end]) != `"2.0"` {
				return -1
			}
		case "id":
			bit, end = 2, skipValue(msg, i)
			if !plainInt(msg[i:end]) {
				return -1
			}
			id = msg[i:end]
		case "result":
			if bit = 4; seen&bit != 0 || msg[i] != '{' {
				return -1
			}
			end = splitResult(msg, i, page)
		default:
			return -1
		}
		if end < 0 || seen&bit != 0 {
			return -1
		}
		seen |= bit
		return end
	}) >= 0
	if !ok || seen != 7 {
		return nil, nil, false
	}
	return id, page, true
}

// splitResult fills page from the result object at b[i] and returns the index past
// it, or -1 when the result is not a plain page.
func splitResult(b []byte, i int, page *rawPage) int {
	var tools, cursor bool
	end := eachMember(b, i, func(key []byte, i int) int {
		switch {
		case string(key) == "tools":
			if tools || b[i] != '[' {
				return -1
			}
			tools = true
			var end int
			page.Tools, end = splitItems(b, i)
			return end
		case string(key) == "nextCursor":
			end := skipValue(b, i)
			val := b[i:end]
			if cursor || val[0] != '"' || bytes.IndexByte(val, '\\') >= 0 || !utf8.Valid(val) {
				return -1
			}
			cursor = true
			page.NextCursor = string(val[1 : len(val)-1])
			return end
		case bytes.EqualFold(key, []byte("tools")) || bytes.EqualFold(key, []byte("nextCursor")):
			return -1
		}
		return skipValue(b, i)
	})
	if !tools {
		return -1
	}
	return end
}

// eachMember calls f with the raw key (between its quotes) and the index of the value
// of every member of the object at b[i], valid JSON, until f returns -1; f returns
// the index just past the value. eachMember returns the index past the object, or -1
// when f did, or when a key holds an escape or a byte outside printable ASCII.
func eachMember(b []byte, i int, f func(key []byte, i int) int) int {
	i = skipWS(b, i+1)
	if b[i] == '}' {
		return i + 1
	}
	for {
		// b[i] is the quote opening a key.
		j := i + 1
		for b[j] != '"' {
			if b[j] == '\\' || b[j] < 0x20 || b[j] >= 0x7f {
				return -1
			}
			j++
		}
		key := b[i+1 : j]
		i = skipWS(b, j+1) + 1 // past the colon
		i = skipWS(b, i)
		if i = f(key, i); i < 0 {
			return -1
		}
		i = skipWS(b, i)
		if b[i] == '}' {
			return i + 1
		}
		i = skipWS(b, i+1) // past the comma
	}
}

// splitItems returns the raw items of the array at b[i], valid JSON, and the index
// past it.
func splitItems(b []byte, i int) ([]json.RawMessage, int) {
	var items []json.RawMessage
	i = skipWS(b, i+1)
	if b[i] == ']' {
		return []json.RawMessage{}, i + 1
	}
	for {
		end := skipValue(b, i)
		items = append(items, json.RawMessage(b[i:end:end]))
		i = skipWS(b, end)
		if b[i] == ']' {
			return items, i + 1
		}
		i = skipWS(b, i+1)
	}
}

// skipValue returns the index just past the JSON value starting at b[i]; b is valid.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
	default: // a number or a literal
		for i < len(b) {
			switch b[i] {
			case ',', ']', '}', ' ', '\t', '\r', '\n':
				return i
			}
			i++
		}
		return i
	}
}

// skipString returns the index just past the string whose quote is b[i].
func skipString(b []byte, i int) int {
	for i++; ; i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// plainInt reports whether v is an integer literal written as go-sdk's client writes
// its request ids: no sign, no leading zero, at most 18 digits.
func plainInt(v []byte) bool {
	if len(v) == 0 || len(v) > 18 || (v[0] == '0' && len(v) > 1) {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

type rawPage struct {
	Tools      []json.RawMessage
	NextCursor string
}

// ValidJSON is the old validJSON.
func ValidJSON(b []byte) bool { return validJSON(b) }

// SplitListResponse is the old splitListResponse.
func SplitListResponse(msg []byte) (id []byte, tools []json.RawMessage, cursor string, ok bool) {
	id, p, ok := splitListResponse(msg)
	if !ok {
		return id, nil, "", false
	}
	return id, p.Tools, p.NextCursor, true
}
