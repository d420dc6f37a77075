// Package jsongen is test support: random JSON text, for tests that compare two
// readings of the same bytes (a fast path and the path it stands for). Values nest to
// a given depth; strings are made of given pieces, spelled as encoding/json writes
// them, with \u escapes here and there as a hand might, or quoted as Go does (whose
// \x escapes are not JSON: some inputs are invalid on purpose); spaces may stand
// between any two tokens.
package jsongen

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
)

// Gen writes random values.
type Gen struct {
	R *rand.Rand
	// Strings are the pieces a string is made of, two to a string.
	Strings []string
	// Literals are spellings of numbers and of true, false and null; small integers
	// are written besides.
	Literals []string
}

// Value writes one value of at most depth levels of arrays and objects to b.
func (g Gen) Value(b *bytes.Buffer, depth int) {
	r := g.R
	g.space(b)
	switch k := r.IntN(8); {
	case depth <= 0 || k < 3:
		switch r.IntN(4) {
		case 0:
			b.WriteString(g.Literals[r.IntN(len(g.Literals))])
		case 1:
			b.WriteString(strconv.Itoa(r.IntN(1000) - 500))
		default:
			g.str(b)
		}
	case k < 6:
		b.WriteByte('{')
		for i := range r.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			g.space(b)
			g.str(b)
			g.space(b)
			b.WriteByte(':')
			g.Value(b, depth-1)
		}
		g.space(b)
		b.WriteByte('}')
	default:
		b.WriteByte('[')
		for i := range r.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			g.Value(b, depth-1)
		}
		b.WriteByte(']')
	}
	g.space(b)
}

// str writes a string of two pieces, spelled one of three ways.
func (g Gen) str(b *bytes.Buffer) {
	r := g.R
	s := g.Strings[r.IntN(len(g.Strings))] + g.Strings[r.IntN(len(g.Strings))]
	switch r.IntN(3) {
	case 0:
		q, _ := json.Marshal(s)
		b.Write(q)
	case 1:
		b.WriteString(strconv.QuoteToASCII(s))
	default:
		b.WriteByte('"')
		for _, c := range []byte(s) {
			if c < 0x20 || c == '"' || c == '\\' || r.IntN(7) == 0 {
				b.WriteString(`\u00` + strconv.FormatUint(uint64(c>>4), 16) + strconv.FormatUint(uint64(c&15), 16))
			} else {
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
	}
}

// space writes JSON's whitespace a quarter of the time.
func (g Gen) space(b *bytes.Buffer) {
	if g.R.IntN(4) == 0 {
		b.WriteString([]string{" ", "\n", "\t ", "\r\n"}[g.R.IntN(4)])
	}
}
