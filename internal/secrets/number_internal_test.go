package secrets

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// randomNumber is a random JSON number literal, with an exponent when exp.
func randomNumber(r *rand.Rand, exp bool) string {
	var b strings.Builder
	if r.IntN(3) == 0 {
		b.WriteByte('-')
	}
	if r.IntN(4) == 0 {
		b.WriteByte('0')
	} else {
		b.WriteByte(byte('1' + r.IntN(9)))
		for range r.IntN(20) {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	if r.IntN(2) == 0 {
		b.WriteByte('.')
		for range 1 + r.IntN(20) {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	if exp {
		b.WriteString([]string{"e", "E", "e+", "e-", "E-"}[r.IntN(5)])
		b.WriteString(strconv.Itoa(r.IntN(40)))
	}
	return b.String()
}

// writtenOut is the number lit's exact value (math/big) written out with as many
// decimals as the literal gives it (its fraction's digits less its exponent), point
// and sign dropped, leading zeros too.
func writtenOut(t *testing.T, lit string) string {
	var v big.Rat
	if _, ok := v.SetString(lit); !ok {
		t.Fatalf("math/big cannot read %s", lit)
	}
	mant, exp, _ := strings.Cut(strings.ToLower(lit), "e")
	decimals := 0
	if _, frac, ok := strings.Cut(mant, "."); ok {
		decimals = len(frac)
	}
	if exp != "" {
		e, err := strconv.Atoi(strings.TrimPrefix(exp, "+"))
		if err != nil {
			t.Fatal(err)
		}
		decimals -= e
	}
	s := v.Abs(&v).FloatString(max(decimals, 0))
	return strings.TrimLeft(strings.ReplaceAll(s, ".", ""), "0")
}

// valueDigits is the number's exact value written out (math/big reads the literal),
// and a number without an exponent has no view more than a digit longer than itself
// (numberKnown relies on it to skip short numbers).
func TestValueDigits_IsTheExactValue(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 100000 {
		lit := randomNumber(r, i%2 == 0)
		got := strings.TrimLeft(string(valueDigits(nil, []byte(lit), 1000)), "0")
		if want := writtenOut(t, lit); got != want {
			t.Fatalf("%s: valueDigits %s, its value written out is %s", lit, got, want)
		}
		if !bytes.ContainsAny([]byte(lit), "eE") {
			for _, v := range [][]byte{valueDigits(nil, []byte(lit), 1000), floatDigits(nil, []byte(lit), 1000)} {
				if len(v) > len(lit)+1 {
					t.Fatalf("%s: a view %s more than a digit longer than the literal", lit, v)
				}
			}
		}
	}
}

// A Known of digits only is found in any spelling of a number whose value holds
// it: K·10^s written with its point anywhere, the zeros K ends in left to the
// exponent, with zeros written after the digits or before them.
func TestNumberKnown_AnySpellingOfTheValue(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for range 100000 {
		nz := r.IntN(6) // K's trailing zeros
		head := []byte{byte('1' + r.IntN(9))}
		for len(head) < 8-nz {
			head = append(head, byte('0'+r.IntN(10)))
		}
		if nz > 0 && head[len(head)-1] == '0' {
			head[len(head)-1] = '1'
		}
		k := Known{Name: "K", Value: string(head) + strings.Repeat("0", nz)}
		// The value is head·10^(nz+s): written as lead "0."s, head split at m,
		// trailing zeros, and the exponent that makes it so.
		s := r.IntN(7)
		m := 1 + r.IntN(len(head))
		lead, trail := r.IntN(3), r.IntN(3)
		var lit string
		if lead > 0 {
			lit = "0." + strings.Repeat("0", lead-1) + string(head) + strings.Repeat("0", trail)
			lit += "e" + strconv.Itoa(lead-1+len(head)+nz+s)
		} else {
			lit = string(head[:m]) + "." + string(head[m:]) + strings.Repeat("0", trail) + "0"
			lit += "E+" + strconv.Itoa(len(head)-m+nz+s)
		}
		if r.IntN(2) == 0 {
			lit = "-" + lit
		}
		if !numberHoldsKnown([]byte(lit), []Known{k}) {
			t.Fatalf("%s does not hold %s", lit, k.Value)
		}
		var v big.Rat
		if _, ok := v.SetString(lit); !ok {
			t.Fatalf("math/big cannot read %s", lit)
		}
		kv, _ := new(big.Int).SetString(k.Value, 10)
		scaled := new(big.Int).Mul(kv, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s)), nil))
		if new(big.Rat).Abs(&v).Cmp(new(big.Rat).SetInt(scaled)) != 0 {
			t.Fatalf("%s is not %s·10^%d: the test wrote it wrong", lit, k.Value, s)
		}
	}
}

// BenchmarkFindNumbers100KB is Find over 100 KB of numbers, a quarter of them with
// an exponent, with a Known of digits only to look for (every number's views are
// looked at).
func BenchmarkFindNumbers100KB(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	sb.WriteString(`{"n":[`)
	for sb.Len() < 100<<10 {
		if sb.Len() > 6 {
			sb.WriteByte(',')
		}
		sb.WriteString(randomNumber(r, r.IntN(4) == 0))
	}
	sb.WriteString(`]}`)
	args := []byte(sb.String())
	known := []Known{{Name: "PIN", Value: "98765432"}}
	b.SetBytes(int64(len(args)))
	for b.Loop() {
		Find(args, known)
	}
}

// decimalKey is the same for two literals exactly when math/big reads the same
// value from them: each random literal against a respelling of it (its point moved,
// the exponent moved back, zeros added) and against the next literal.
func TestDecimalKey_IsTheValue(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	// respell writes lit as 0.DIGITS (zeros after them at random) and the exponent
	// that keeps its value: DIGITS·10^-scale is 0.DIGITS·10^(len(DIGITS)-scale).
	respell := func(lit string) string {
		neg := strings.HasPrefix(lit, "-")
		mant, exp, _ := strings.Cut(strings.ToLower(strings.TrimPrefix(lit, "-")), "e")
		scale := 0
		if i := strings.IndexByte(mant, '.'); i >= 0 {
			scale = len(mant) - i - 1
		}
		if exp != "" {
			e, _ := strconv.Atoi(strings.TrimPrefix(exp, "+"))
			scale -= e
		}
		digits := strings.Replace(mant, ".", "", 1)
		out := "0." + digits + strings.Repeat("0", r.IntN(3)) + "e" + strconv.Itoa(len(digits)-scale)
		if neg {
			out = "-" + out
		}
		return out
	}
	prev := "0"
	for i := range 50000 {
		lit := randomNumber(r, i%2 == 0)
		alt := respell(lit)
		var a, b big.Rat
		if _, ok := a.SetString(lit); !ok {
			t.Fatal(lit)
		}
		if _, ok := b.SetString(alt); !ok || a.Cmp(&b) != 0 {
			t.Fatalf("the test respelled %s as %s, another value", lit, alt)
		}
		if k1, k2 := decimalKey(nil, []byte(lit)), decimalKey(nil, []byte(alt)); string(k1) != string(k2) {
			t.Fatalf("%s is %s, its respelling %s is %s", lit, k1, alt, k2)
		}
		var p big.Rat
		p.SetString(prev)
		if same := string(decimalKey(nil, []byte(lit))) == string(decimalKey(nil, []byte(prev))); same != (a.Cmp(&p) == 0) {
			t.Fatalf("%s and %s: the same key %v, the same value %v", lit, prev, same, a.Cmp(&p) == 0)
		}
		prev = lit
	}
}

// An exponent is read to maxExponent and no further, either way, with no
// multiplication past it (on 386 an int has 32 bits: e2147483650 wrapped negative).
func TestExponent_BoundedWithoutWrapping(t *testing.T) {
	for e, want := range map[string]int{
		"": 0, "e7": 7, "E+07": 7, "e-12": -12, "e1073741823": 1073741823,
		"e1073741824": maxExponent, "e2147483650": maxExponent, "e-2147483650": -maxExponent,
		"e" + strings.Repeat("9", 40): maxExponent,
	} {
		if got := exponent([]byte(e)); got != want {
			t.Errorf("exponent(%q) = %d, want %d", e, got, want)
		}
	}
}
