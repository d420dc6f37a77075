package secrets

import (
	"bytes"
	"encoding/base64"
	"slices"
)

// A server reads an argument the way it decodes it: a private key an agent attaches
// as base64, or a token it percent-encodes into a query, leaves as surely as one sent
// in the clear. So a string is also read as its decodings (one level, and base64
// within a percent-decoded string): its percent escapes decoded, and each long run
// of base64 decoded at each of its four alignments (a run's first bytes may be a
// path or a name, not the encoding). A secret found only in a decoding is named with
// its encoding ("a private key, base64-encoded"); a mask hides the encoded bytes.
// This is the encodings a careless or well-meaning agent uses, not a guarantee
// against one that hides a secret on purpose: an allow for an exfiltration tool
// still trusts what it allows.

// Encodings a finding names.
const (
	encBase64  = "base64-encoded"
	encPercent = "percent-encoded"
)

// minBase64Run is the shortest run of base64 decoded: 20 bytes decode to 15, fewer
// than any shape needs.
const minBase64Run = 20

// decoding is one decoded view of a string s.
type decoding struct {
	b   []byte
	enc string
	// a, z are the span of s that b decodes. A percent view (pct set) maps back to
	// s exactly, so that a secret in b is masked where it stands; a base64 view is
	// masked whole.
	a, z int
	pct  bool
	// esc are the indexes in b of the bytes a %XX escape made, plus those of the
	// spaces a '+' made, each sorted.
	esc, plus []int
}

// at is where b[k] starts in s (k may be len(b)): each escape before it took three
// bytes of s for one.
func (d *decoding) at(k int) int {
	n, _ := slices.BinarySearch(d.esc, k)
	return k + 2*n
}

// span is where b[i:j] came from in s; for a base64 view, the whole encoded span.
func (d *decoding) span(i, j int) (int, int) {
	if !d.pct {
		return d.a, d.z
	}
	return d.at(i), d.at(j)
}

// escaped reports whether b[i:j] holds a byte an escape or a '+' made; else the
// percent view reads those bytes as s already does, and finds nothing new.
func (d *decoding) escaped(i, j int) bool {
	if !d.pct {
		return true
	}
	in := func(l []int) bool { n, _ := slices.BinarySearch(l, i); return n < len(l) && l[n] < j }
	return in(d.esc) || in(d.plus)
}

// decodings calls f with each decoded view of s, until f returns false.
func decodings(s []byte, f func(d *decoding) bool) bool {
	pv := percentView(s)
	if pv != nil && !f(pv) {
		return false
	}
	if !base64Views(s, func(b []byte, a, z int) bool { return f(&decoding{b: b, enc: encBase64, a: a, z: z}) }) {
		return false
	}
	if pv == nil || len(pv.esc) == 0 {
		return true // a '+' read as a space only parts base64 runs already read
	}
	return base64Views(pv.b, func(b []byte, a, z int) bool {
		return f(&decoding{b: b, enc: encBase64, a: pv.at(a), z: pv.at(z)})
	})
}

// percentView is s with its %XX escapes decoded and '+' read as a space (as a query
// is), or nil when s has neither.
func percentView(s []byte) *decoding {
	if bytes.IndexByte(s, '%') < 0 && bytes.IndexByte(s, '+') < 0 {
		return nil
	}
	d := &decoding{enc: encPercent, a: 0, z: len(s), pct: true}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		switch {
		case s[i] == '%' && i+2 < len(s) && unhex(s[i+1]) >= 0 && unhex(s[i+2]) >= 0:
			d.esc = append(d.esc, len(out))
			out = append(out, byte(unhex(s[i+1])<<4|unhex(s[i+2])))
			i += 3
		case s[i] == '+':
			d.plus = append(d.plus, len(out))
			out = append(out, ' ')
			i++
		default:
			out = append(out, s[i])
			i++
		}
	}
	d.b = out
	return d
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}

// base64Byte reports whether c is of either base64 alphabet.
func base64Byte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// base64Views calls f with each run of at least minBase64Run base64 bytes in s
// decoded at each alignment, and the run's span (its '=' padding included).
func base64Views(s []byte, f func(b []byte, a, z int) bool) bool {
	var norm, out []byte
	for i := 0; i < len(s); {
		if !base64Byte(s[i]) {
			i++
			continue
		}
		a := i
		for i < len(s) && base64Byte(s[i]) {
			i++
		}
		run := s[a:i]
		for i < len(s) && s[i] == '=' {
			i++
		}
		if len(run) < minBase64Run {
			continue
		}
		norm = append(norm[:0], run...)
		for k, c := range norm {
			switch c {
			case '-':
				norm[k] = '+'
			case '_':
				norm[k] = '/'
			}
		}
		for off := range 4 {
			in := norm[off:]
			if len(in)%4 == 1 {
				in = in[:len(in)-1]
			}
			out = slices.Grow(out[:0], base64.RawStdEncoding.DecodedLen(len(in)))
			out = out[:base64.RawStdEncoding.DecodedLen(len(in))]
			n, err := base64.RawStdEncoding.Decode(out, in)
			if err != nil {
				continue
			}
			if !f(out[:n], a, i) {
				return false
			}
		}
	}
	return true
}
