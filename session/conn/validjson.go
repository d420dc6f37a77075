package conn

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
