// Package jsonlex is airlock's one JSON lexer: the tokens of RFC 8259 read from a
// byte slice at an offset, for the front ends that walk JSON without a decoder
// (canonical arguments and fingerprints in trust, the tool pass, the page reader's
// validation and split). Every function takes the input and the offset of a token
// and returns the offset just past it, or, with an Err, the offset where the input
// went wrong (len(b) for EOF). Nothing is allocated: strings are appended to a
// caller's buffer decoded, or skipped raw; numbers are kept raw (their span).
//
// Its rules: whitespace is space, tab, CR and LF only; numbers follow
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and a leading zero ends the number
// (what follows is the caller's to refuse); strings refuse raw control bytes and
// any escape but JSON's; a byte that is not UTF-8 is accepted in a string and, when
// decoding, read as U+FFFD (one per byte, as utf8.DecodeRune reads it); a \u escape
// of a lone or misordered surrogate reads as U+FFFD and the escape after it is read
// on its own. That is encoding/json's reading, byte for byte.
//
// What it does NOT decide, leaving it to the front ends: whether invalid UTF-8 or a
// lone surrogate is an error (Char reports what it read; a front end may refuse),
// duplicate keys and key order, how deep nesting may go (Skip takes the bound;
// MaxNesting is encoding/json's), what follows a value, and every error message.
package jsonlex

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Err says why a token could not be read.
type Err uint8

const (
	OK     Err = iota
	EOF        // the input ended inside the token
	Syntax     // the byte at the returned offset cannot be there
	Deep       // nesting went past the bound Skip was given
)

// MaxNesting is encoding/json's bound on the objects and arrays open at once.
const MaxNesting = 10000

// Quote is what Char returns for the quote that closes a string.
const Quote rune = -1

// plain marks the bytes a string holds as they are, decoded or not: printable ASCII
// other than '"' and '\\'.
var plain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// raw marks the bytes a string holds when it is only skipped: plain ones, and every
// byte from 0x80 on (UTF-8 or not, a string accepts it).
var raw = func() (t [256]bool) {
	for b := 0x20; b < 256; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// Plain reports whether c stands for itself inside a string: printable ASCII other
// than '"' and '\\'.
func Plain(c byte) bool { return plain[c] }

// PlainEnd returns the offset of the first byte from b[i] on that is not Plain.
func PlainEnd(b []byte, i int) int {
	for i < len(b) && plain[b[i]] {
		i++
	}
	return i
}

// RawEnd returns the offset of the first byte from b[i] on that a string does not
// hold as it is: '"', '\\' or a control byte (every byte from 0x80 on is held, UTF-8
// or not). In input known to be valid UTF-8, b[i:RawEnd(b, i)] inside a string is
// the text it stands for, as Char would read it character by character.
func RawEnd(b []byte, i int) int {
	for i < len(b) && raw[b[i]] {
		i++
	}
	return i
}

// Space returns the offset of the first byte from b[i] on that is not whitespace.
func Space(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Char reads one character inside a string at b[i] (after the opening quote): the
// closing quote (Quote), an escape (the character it stands for), or a character
// as utf8.DecodeRune reads it (utf8.RuneError for a byte that is not UTF-8). It
// refuses a raw control byte and an escape JSON does not have.
func Char(b []byte, i int) (r rune, next int, e Err) {
	if i >= len(b) {
		return 0, i, EOF
	}
	switch c := b[i]; {
	case c == '"':
		return Quote, i + 1, OK
	case c == '\\':
		return escape(b, i)
	case c < 0x20:
		return 0, i, Syntax
	case c < utf8.RuneSelf:
		return rune(c), i + 1, OK
	}
	r, size := utf8.DecodeRune(b[i:])
	return r, i + size, OK
}

// escape reads the escape whose backslash is b[i].
func escape(b []byte, i int) (rune, int, Err) {
	i++
	if i >= len(b) {
		return 0, i, EOF
	}
	switch c := b[i]; c {
	case '"', '\\', '/':
		return rune(c), i + 1, OK
	case 'b':
		return '\b', i + 1, OK
	case 'f':
		return '\f', i + 1, OK
	case 'n':
		return '\n', i + 1, OK
	case 'r':
		return '\r', i + 1, OK
	case 't':
		return '\t', i + 1, OK
	case 'u':
	default:
		return 0, i, Syntax
	}
	i++
	for j := i; j < i+4; j++ {
		if j >= len(b) {
			return 0, j, EOF
		}
		if _, ok := hexDigit(b[j]); !ok {
			return 0, j, Syntax
		}
	}
	r, _ := Hex4(b[i : i+4])
	i += 4
	if !utf16.IsSurrogate(r) {
		return r, i, OK
	}
	if i+6 <= len(b) && b[i] == '\\' && b[i+1] == 'u' {
		if r2, ok := Hex4(b[i+2 : i+6]); ok {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, i + 6, OK
			}
		}
	}
	return utf8.RuneError, i, OK
}

// Hex4 reads the four hexadecimal digits b[:4].
func Hex4(b []byte) (rune, bool) {
	var r rune
	for _, x := range b[:4] {
		d, ok := hexDigit(x)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

func hexDigit(b byte) (byte, bool) {
	switch {
	case b >= '0' && b <= '9':
		return b - '0', true
	case b >= 'a' && b <= 'f':
		return b - 'a' + 10, true
	case b >= 'A' && b <= 'F':
		return b - 'A' + 10, true
	}
	return 0, false
}

// AppendString appends the decoded string whose opening quote is b[i] to dst and
// returns it with the offset past the closing quote. On an error dst holds what was
// decoded before it.
func AppendString(dst, b []byte, i int) ([]byte, int, Err) {
	i++
	for {
		j := PlainEnd(b, i)
		dst = append(dst, b[i:j]...)
		if j < len(b) && b[j] == '"' {
			return dst, j + 1, OK
		}
		if j < len(b) && b[j] >= utf8.RuneSelf {
			// A character that is valid UTF-8 is appended as the bytes it was read
			// from, not decoded and encoded again.
			if _, size := utf8.DecodeRune(b[j:]); size > 1 {
				dst = append(dst, b[j:j+size]...)
				i = j + size
				continue
			}
		}
		r, next, e := Char(b, j)
		if e != OK || r == Quote {
			return dst, next, e
		}
		dst = utf8.AppendRune(dst, r)
		i = next
	}
}

// SkipString reads the string whose opening quote is b[i] without decoding it and
// returns the offset past the closing quote. It accepts what Char accepts, in one
// loop: a one-letter escape is stepped over in place.
func SkipString(b []byte, i int) (int, Err) {
	for i++; i < len(b); {
		c := b[i]
		switch {
		case raw[c]:
			i++
		case c == '"':
			return i + 1, OK
		case c == '\\' && i+1 < len(b) && oneLetter[b[i+1]]:
			i += 2
		default:
			_, next, e := Char(b, i)
			if e != OK {
				return next, e
			}
			i = next
		}
	}
	return i, EOF
}

// oneLetter marks the letters of JSON's one-letter escapes.
var oneLetter = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

// Literal reads lit (true, false or null) at b[i].
func Literal(b []byte, i int, lit string) (int, Err) {
	for j := 0; j < len(lit); j++ {
		if i+j >= len(b) {
			return i + j, EOF
		}
		if b[i+j] != lit[j] {
			return i + j, Syntax
		}
	}
	return i + len(lit), OK
}

// Number reads the number at b[i]; its text is b[i:end].
func Number(b []byte, i int) (end int, e Err) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, EOF
	}
	switch c := b[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		i = digits(b, i+1)
	default:
		return i, Syntax
	}
	if i < len(b) && b[i] == '.' {
		if i, e = someDigits(b, i+1); e != OK {
			return i, e
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, e = someDigits(b, i); e != OK {
			return i, e
		}
	}
	return i, OK
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func someDigits(b []byte, i int) (int, Err) {
	if i >= len(b) {
		return i, EOF
	}
	if b[i] < '0' || b[i] > '9' {
		return i, Syntax
	}
	return digits(b, i+1), OK
}

// Skip reads the one value at b[i] (whitespace already skipped), with at most
// maxDepth objects and arrays open at once, and returns the offset past it.
func Skip(b []byte, i, maxDepth int) (int, Err) {
	var open [64]byte // '{' or '[' for each container open; grows past 64
	stack := open[:0]
	var e Err
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return i, EOF
		}
		switch c := b[i]; c {
		case '{', '[':
			if len(stack) == maxDepth {
				return i, Deep
			}
			stack = append(stack, c)
			i = Space(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' or ']': empty
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				if i, e = key(b, i); e != OK {
					return i, e
				}
			}
			continue // the first member's or item's value
		case '"':
			i, e = SkipString(b, i)
		case 't':
			i, e = Literal(b, i, "true")
		case 'f':
			i, e = Literal(b, i, "false")
		case 'n':
			i, e = Literal(b, i, "null")
		default:
			i, e = Number(b, i)
		}
		if e != OK {
			return i, e
		}
		// A value ended before b[i]: close what it ends, or go on to the next one.
		for {
			if len(stack) == 0 {
				return i, OK
			}
			i = Space(b, i)
			if i >= len(b) {
				return i, EOF
			}
			top := stack[len(stack)-1]
			if b[i] == top+2 { // '}' or ']'
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return i, Syntax
			}
			i = Space(b, i+1)
			if top == '{' {
				if i, e = key(b, i); e != OK {
					return i, e
				}
			}
			break
		}
	}
}

// key reads a member's key and colon at b[i] and returns the offset of its value
// (after whitespace).
func key(b []byte, i int) (int, Err) {
	if i >= len(b) {
		return i, EOF
	}
	if b[i] != '"' {
		return i, Syntax
	}
	i, e := SkipString(b, i)
	if e != OK {
		return i, e
	}
	i = Space(b, i)
	if i >= len(b) {
		return i, EOF
	}
	if b[i] != ':' {
		return i, Syntax
	}
	return Space(b, i+1), OK
}

// SkipValid returns the offset past the value at b[i] of input already known valid
// (checked by Skip), without checking it again.
func SkipValid(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipValidString(b, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch b[i] {
			case '"':
				i = skipValidString(b, i) - 1
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

// skipValidString returns the offset past the valid string whose quote is b[i].
func skipValidString(b []byte, i int) int {
	for i++; ; i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}
