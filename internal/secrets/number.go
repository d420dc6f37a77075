package secrets

import (
	"bytes"
	"math"
	"strconv"

	"github.com/airlock-mcp/airlock/internal/jsonlex"
)

// A number is read by the server as a value, not as the text the agent wrote: a
// PIN of 12345678 arrives as 1.2345678e7, 123456780e-1 or 12345677.999999999999
// just as well (the last is the same float64), and a server that prints it prints
// 12345678. So a number holds a Known of digits only when the number's digits do,
// in any of the forms a server has it in (its views), not only as written, and a
// Known that is itself a number (-1234567, 1234567.5) when the number's value is its
// value (1.2345675e6 is 1234567.5). Such a number is one secret: it is masked and
// redacted whole.

// numberKnown calls f with each Known the number whose JSON literal is lit holds:
// a Known of digits only with the whole literal (a 0, b len(lit)) when the literal
// or one of the number's views holds it; a Known that is a number with the whole
// literal when the literal holds it or the number's value is its value
// (sameValue); any other Known with each occurrence lit[a:b] of its value as
// written.
func numberKnown(lit []byte, known []Known, f func(k Known, a, b int)) {
	var exactBuf, floatBuf [96]byte
	var exact, float []byte
	made := false
	for _, k := range known {
		v := []byte(k.Value)
		if !allDigits(v) && isNumber(v) {
			if bytes.Contains(lit, v) || sameValue(lit, v) {
				f(k, 0, len(lit))
			}
			continue
		}
		if !allDigits(v) {
			for i := 0; ; {
				j := bytes.Index(lit[i:], v)
				if j < 0 {
					break
				}
				f(k, i+j, i+j+len(v))
				i += j + len(v)
			}
			continue
		}
		if bytes.Contains(lit, v) {
			f(k, 0, len(lit))
			continue
		}
		if t := bytes.TrimLeft(v, "0"); len(t) < len(v) {
			// 0012345678 is the value 12345678, which JSON spells only without
			// its zeros: its digits are looked for as any digits-only Known's
			// are, when there are as many as a Known needs; fewer (00123456)
			// only as the number's value, of either sign.
			if len(t) >= MinKnown {
				v = t
				if bytes.Contains(lit, v) {
					f(k, 0, len(lit))
					continue
				}
			} else if len(t) >= minZeroPadded && sameValue(bytes.TrimPrefix(lit, []byte("-")), t) {
				f(k, 0, len(lit))
				continue
			}
		}
		if len(lit)+1 < len(v) && !bytes.ContainsAny(lit, "eE") {
			// Without an exponent a number's views have at most one digit more
			// than its literal (a float64 rounded up: 99…9 read as 100…0).
			continue
		}
		if !made {
			zeros := longestDigits(known)
			exact = valueDigits(exactBuf[:0], lit, zeros)
			float = floatDigits(floatBuf[:0], lit, zeros)
			made = true
		}
		if bytes.Contains(exact, v) || bytes.Contains(float, v) {
			f(k, 0, len(lit))
		}
	}
}

// minZeroPadded is the fewest digits a Known of digits only with leading zeros must
// keep without them to be looked for as its value in a number (00123456 as 123456
// or -123456): a shorter value (00002026 is 2026) is an ordinary number.
const minZeroPadded = 6

// numberHoldsKnown reports whether numberKnown finds any Known in lit.
func numberHoldsKnown(lit []byte, known []Known) bool {
	found := false
	numberKnown(lit, known, func(Known, int, int) { found = true })
	return found
}

// allDigits reports whether v is made of the digits 0-9 alone.
func allDigits(v []byte) bool {
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(v) > 0
}

// isNumber reports whether v is one JSON number and nothing else.
func isNumber(v []byte) bool {
	end, e := jsonlex.Number(v, 0)
	return e == jsonlex.OK && end == len(v)
}

// sameValue reports whether the JSON numbers lit and v have the same value, exactly
// or as the float64 lit parses to (what a server that reads it has): 1.2345675e6 and
// 12345675e-1 are 1234567.5, 1234567.49999999999999999 is too as a float64. Signs
// count: -1234567 is not 1234567.
func sameValue(lit, v []byte) bool {
	var a, b [64]byte
	want := decimalKey(b[:0], v)
	if bytes.Equal(decimalKey(a[:0], lit), want) {
		return true
	}
	if sig, mag := decimalShape(lit); sig <= 15 && mag > -307 && mag <= 308 {
		return false // its float64 is its own value (floatDigits)
	}
	f, ok := parseValue(lit)
	if !ok {
		return false
	}
	var buf [32]byte
	return bytes.Equal(decimalKey(a[:0], strconv.AppendFloat(buf[:0], f, 'e', -1, 64)), want)
}

// parseValue is the float64 a JSON decoder reads the number lit as, the nearest to
// its value; false when that is no finite float64. strconv.ParseFloat stops reading
// an exponent at 10000, so a literal whose leading zeros make up for a longer one
// (0.000…0001e100008, which Python and JavaScript read as 1e7) is given to it as its
// value: sign, significant digits and magnitude (decimalKey), the exponent short.
func parseValue(lit []byte) (float64, bool) {
	var buf [64]byte
	key := decimalKey(buf[:0], lit) // [-]DIGITSeMAG: 0.DIGITS × 10^MAG
	if len(key) == 1 {
		return 0, true // a zero, of either sign
	}
	n := 0
	if key[0] == '-' {
		n = 1
	}
	norm := make([]byte, 0, len(key)+2)
	norm = append(append(append(norm, key[:n]...), "0."...), key[n:]...)
	f, err := strconv.ParseFloat(string(norm), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// decimalKey appends to dst what a JSON number's value is, whatever its spelling:
// its sign, its significant digits and its magnitude (decimalShape), "0" for a zero
// of either sign.
func decimalKey(dst, lit []byte) []byte {
	sig, mag := decimalShape(lit)
	if sig == 0 {
		return append(dst, '0')
	}
	if lit[0] == '-' {
		dst = append(dst, '-')
	}
	n := 0 // significant digits written
	started := false
	for _, c := range lit {
		if c == 'e' || c == 'E' {
			break
		}
		if c < '0' || c > '9' || !started && c == '0' {
			continue
		}
		started = true
		if n < sig {
			dst = append(dst, c)
			n++
		}
	}
	dst = append(dst, 'e')
	return strconv.AppendInt(dst, int64(mag), 10)
}

// longestDigits is the length of the longest Known of digits only: no run of zeros
// longer than it can matter to finding one, so a number's views add no more (1e255
// is not written out to 256 digits).
func longestDigits(known []Known) int {
	n := 0
	for _, k := range known {
		if len(k.Value) > n && allDigits([]byte(k.Value)) {
			n = len(k.Value)
		}
	}
	return n
}

// A number's views are its digits, without sign or point, in the forms a server
// may have it in: its exact value written out in full (valueDigits), and the
// shortest decimal of the float64 it parses to (floatDigits: what JavaScript, and
// most JSON decoders, make of it), written out the same way.

// floatDigits appends to dst the digits of the shortest decimal of the float64 the
// JSON number lit parses to, written out in full without sign or point (valueDigits
// of it, the zeros it adds bounded by zeros); nothing when it parses to no finite
// float64, or when the float64 is sure to be the literal's own value: a decimal of
// at most 15 significant digits in the normal range is the shortest decimal of its
// float64 (it round-trips), which a subnormal one need not be (4.9e-324 is 5e-324).
func floatDigits(dst, lit []byte, zeros int) []byte {
	sig, mag := decimalShape(lit)
	if sig <= 15 && mag > -307 && mag <= 308 {
		return dst
	}
	f, ok := parseValue(lit)
	if !ok {
		return dst
	}
	var buf [32]byte
	return valueDigits(dst, strconv.AppendFloat(buf[:0], math.Abs(f), 'e', -1, 64), zeros)
}

// decimalShape is a JSON number's count of significant digits (its first nonzero
// digit to its last, exponent aside) and its magnitude: the power of ten of its
// first significant digit, plus one (12.5 is 2, 0.05 is -1; 0 for a zero). An
// exponent past maxExponent reads as maxExponent.
func decimalShape(lit []byte) (sig, mag int) {
	first, last, n, point := -1, -1, 0, -1
	i := 0
	for ; i < len(lit) && lit[i] != 'e' && lit[i] != 'E'; i++ {
		switch c := lit[i]; {
		case c == '.':
			point = n
		case c >= '0' && c <= '9':
			if c != '0' {
				if first < 0 {
					first = n
				}
				last = n
			}
			n++
		}
	}
	if first < 0 {
		return 0, 0
	}
	if point < 0 {
		point = n
	}
	return last - first + 1, point - first + exponent(lit[i:])
}

// maxExponent bounds what exponent reads, either way: far past any exponent the
// zeros of an argument (at most 32 MiB) can make up for, and far from overflowing an
// int of 32 bits when a literal's own digits are added to it.
const maxExponent = 1 << 30

// exponent is the value of a JSON number's exponent part ("e-12"; "" is 0),
// bounded to maxExponent either way.
func exponent(e []byte) int {
	if len(e) == 0 {
		return 0
	}
	e = e[1:] // 'e' or 'E'
	neg := len(e) > 0 && e[0] == '-'
	if len(e) > 0 && (e[0] == '+' || e[0] == '-') {
		e = e[1:]
	}
	x := 0
	for _, c := range e {
		if d := int(c - '0'); x <= (maxExponent-d)/10 {
			x = x*10 + d
		} else {
			x = maxExponent // with no multiplication that could wrap an int of 32 bits
		}
	}
	if neg {
		return -x
	}
	return x
}

// valueDigits appends to dst the exact value of the JSON number lit written out in
// full, without sign, point or exponent: 1.2345678e7 and 12345678.0 are 12345678
// (and 123456780), 5e-4 is 00005. The zeros the exponent adds on either side are
// at most zeros.
func valueDigits(dst, lit []byte, zeros int) []byte {
	i := 0
	if i < len(lit) && lit[i] == '-' {
		i++
	}
	mant := i
	n := 0      // the mantissa's digits
	point := -1 // where the point stands among them; -1 until one is seen
	for ; i < len(lit) && lit[i] != 'e' && lit[i] != 'E'; i++ {
		if lit[i] == '.' {
			point = n
			continue
		}
		n++
	}
	mantEnd := i
	if point < 0 {
		point = n
	}
	point += exponent(lit[i:])
	if point <= 0 {
		dst = appendZeros(dst, 1+min(-point, zeros)) // 0.000ddd
	}
	for _, c := range lit[mant:mantEnd] {
		if c != '.' {
			dst = append(dst, c)
		}
	}
	if point > n {
		dst = appendZeros(dst, min(point-n, zeros))
	}
	return dst
}

func appendZeros(dst []byte, n int) []byte {
	for range n {
		dst = append(dst, '0')
	}
	return dst
}
