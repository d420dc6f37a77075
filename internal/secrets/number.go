package secrets

import (
	"bytes"
	"math"
	"strconv"
)

// A number is read by the server as a value, not as the text the agent wrote: a
// PIN of 12345678 arrives as 1.2345678e7, 123456780e-1 or 12345677.999999999999
// just as well (the last is the same float64), and a server that prints it prints
// 12345678. So a number holds a Known of digits only when the number's digits do,
// in any of the forms a server has it in (numberViews), not only as written.

// numberKnown calls f with each Known the number whose JSON literal is lit holds:
// each occurrence lit[a:b] of its value as written, and, for a Known of digits
// only that lit does not hold as written, the whole literal (a 0, b len(lit)) when
// one of the number's views holds it.
func numberKnown(lit []byte, known []Known, f func(k Known, a, b int)) {
	var exactBuf, floatBuf [96]byte
	var exact, float []byte
	made := false
	for _, k := range known {
		v := []byte(k.Value)
		found := false
		for i := 0; ; {
			j := bytes.Index(lit[i:], v)
			if j < 0 {
				break
			}
			found = true
			f(k, i+j, i+j+len(v))
			i += j + len(v)
		}
		if found || !allDigits(v) || len(lit) < len(v) && bytes.IndexAny(lit, "eE") < 0 {
			// Without an exponent a number's views are no longer than its
			// literal (the float64's shortest decimal has no more digits).
			continue
		}
		if !made {
			exact, float, made = valueDigits(exactBuf[:0], lit), floatDigits(floatBuf[:0], lit), true
		}
		if bytes.Contains(exact, v) || bytes.Contains(float, v) {
			f(k, 0, len(lit))
		}
	}
}

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

// maxViewZeros bounds the zeros an exponent adds to a number's written-out digits
// (valueDigits): 1e999999999 is not written out in full. A Known of digits only
// is found in them as long as it has fewer zeros in a row than this.
const maxViewZeros = 256

// A number's views are its digits, without sign or point, in the forms a server
// may have it in: its exact value written out in full (valueDigits), and the
// shortest decimal of the float64 it parses to (floatDigits: what JavaScript, and
// most JSON decoders, make of it), written out the same way.

// floatDigits appends to dst the digits of the shortest decimal of the float64 the
// JSON number lit parses to, written out in full without sign or point; nothing
// when that is not a number between 1e-30 and 1e30, or when it is the literal's own
// value: a decimal of at most 15 significant digits is the shortest one of its
// float64 (it round-trips), so only a longer one can read otherwise.
func floatDigits(dst, lit []byte) []byte {
	if significantDigits(lit) <= 15 {
		return dst
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if a := math.Abs(f); err != nil || a < 1e-30 || a >= 1e30 {
		return dst
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, math.Abs(f), 'f', -1, 64)
	out := dst[:start]
	for _, c := range dst[start:] {
		if c != '.' {
			out = append(out, c)
		}
	}
	return out
}

// significantDigits counts the digits of a JSON number's literal from its first
// nonzero digit to its last, exponent aside.
func significantDigits(lit []byte) int {
	first, last, n := -1, -1, 0
	for _, c := range lit {
		if c == 'e' || c == 'E' {
			break
		}
		if c >= '0' && c <= '9' {
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
		return 0
	}
	return last - first + 1
}

// valueDigits is the exact value of the JSON number lit written out in full,
// without sign, point or exponent: 1.2345678e7 and 12345678.0 are 12345678 (and
// 123456780), 5e-4 is 00005. The zeros the exponent adds on either side are at
// most maxViewZeros. It is appended to dst.
func valueDigits(dst, lit []byte) []byte {
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
	if i < len(lit) {
		i++ // the exponent: 'e', a sign, digits
		neg := false
		if i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
			neg = lit[i] == '-'
			i++
		}
		exp := 0
		for ; i < len(lit); i++ {
			if exp < 1<<20 {
				exp = exp*10 + int(lit[i]-'0')
			}
		}
		if neg {
			exp = -exp
		}
		point += exp
	}
	if point <= 0 {
		dst = appendZeros(dst, 1+min(-point, maxViewZeros)) // 0.000ddd
	}
	for _, c := range lit[mant:mantEnd] {
		if c != '.' {
			dst = append(dst, c)
		}
	}
	if point > n {
		dst = appendZeros(dst, min(point-n, maxViewZeros))
	}
	return dst
}

func appendZeros(dst []byte, n int) []byte {
	for range n {
		dst = append(dst, '0')
	}
	return dst
}
