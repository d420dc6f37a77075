package secrets

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/trust"
)

// redactPieces are the strings generated arguments are made of: plain words, key
// words and words that merely contain one, secret shapes, a known value, escapes,
// and bytes that are not UTF-8.
var redactPieces = []string{
	"plain words", "keywords", "monkey", "author", "token", "api_key", "password",
	"ghp_" + strings.Repeat("a1B2", 9), "Bearer abc.def.ghi", "AKIAIOSFODNN7EXAMPLE",
	"AWS_SECRET=wJalrXUtnFEMI/K7MDENG", "https://user:hunter22@example.com/x",
	"known-value-1234", "Z2hwXw==", "a\u00e9\u4e16", "\x00\x1f", "\xff\xfe", "\\u0041",
	"x-api-key", "Set-Cookie", "", "100%41", "line\nbreak", "%67%68%70%5f", "12345678",
}

var redactKnown = []Known{{Name: "the value of TEST_KEY", Value: "known-value-1234"}, {Name: "the value of TEST_PIN", Value: "12345678"}}

// genArgs writes a random JSON value of at most depth levels to b, with strings
// made of redactPieces, spelled as encoding/json or as a hand would (escapes,
// spaces).
func genArgs(r *rand.Rand, b *bytes.Buffer, depth int) {
	str := func() {
		s := redactPieces[r.IntN(len(redactPieces))] + redactPieces[r.IntN(len(redactPieces))]
		switch r.IntN(3) {
		case 0:
			q, _ := json.Marshal(s)
			b.Write(q)
		case 1:
			b.WriteString(strconv.QuoteToASCII(s)) // \x escapes are not JSON: invalid
		default:
			b.WriteByte('"')
			for _, c := range []byte(s) {
				if c < 0x20 || c == '"' || c == '\\' || r.IntN(8) == 0 {
					b.WriteString(`\u00` + strconv.FormatUint(uint64(c>>4), 16) + strconv.FormatUint(uint64(c&15), 16))
				} else {
					b.WriteByte(c)
				}
			}
			b.WriteByte('"')
		}
	}
	switch k := r.IntN(8); {
	case depth <= 0 || k < 3:
		switch r.IntN(4) {
		case 0:
			str()
		case 1:
			b.WriteString(strconv.Itoa(r.IntN(1000) - 500))
		case 2:
			b.WriteString([]string{"true", "false", "null", "1e3", "-0.5", "123456789", "-12345678.5e1", "1234567"}[r.IntN(8)])
		default:
			str()
		}
	case k < 6:
		b.WriteString("{ ")
		for i := range r.IntN(4) {
			if i > 0 {
				b.WriteString(" ,")
			}
			str()
			b.WriteString(" : ")
			genArgs(r, b, depth-1)
		}
		b.WriteByte('}')
	default:
		b.WriteByte('[')
		for i := range r.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			genArgs(r, b, depth-1)
		}
		b.WriteByte(']')
	}
}

// sameRedaction fails t unless RedactWith's answer for args is the full rebuild's
// (redactRaw) up to the canonical form the audit log writes it in.
func sameRedaction(t *testing.T, args []byte) (fast bool) {
	t.Helper()
	r := redactor{known: usable(redactKnown)}
	got := RedactWith(args, redactKnown)
	slow, ok := r.redactRaw(args, 0)
	if !ok {
		slow = json.RawMessage(`"[unparseable arguments redacted]"`)
	}
	g, gerr := trust.Canonical(got)
	w, werr := trust.Canonical(slow)
	if gerr != nil || werr != nil || !bytes.Equal(g, w) {
		t.Fatalf("RedactWith(%q)\n = %s (%v)\nthe full rebuild: %s (%v)", args, got, gerr, slow, werr)
	}
	return r.clean(args)
}

// Arguments with nothing to redact are returned without being rebuilt; the answer
// is the rebuild's on every kind of input, clean or not: secrets at any depth, in
// keys and values, escaped, encoded, invalid, too deep.
func TestRedactWith_UnchangedArgumentsAreTheRebuildsAnswer(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	fast, seen := 0, 0
	for range 10_000 {
		b.Reset()
		genArgs(r, &b, 1+r.IntN(5))
		if sameRedaction(t, b.Bytes()) {
			fast++
		}
		seen++
	}
	deep := strings.Repeat(`{"a":`, trust.MaxArgsDepth) + `"x"` + strings.Repeat(`}`, trust.MaxArgsDepth)
	deeper := strings.Repeat(`[`, trust.MaxArgsDepth+1) + `1` + strings.Repeat(`]`, trust.MaxArgsDepth+1)
	for _, s := range []string{deep, deeper, `{"a":1,"a":2}`, `{"token":{"x":1}}`, ` {"a":"b"} `, `{"a":"b"}x`, `{"a":`, `"\ud800"`, ""} {
		sameRedaction(t, []byte(s))
	}
	// Both paths are exercised: a test of one only would prove nothing.
	if fast < seen/10 || fast > seen*9/10 {
		t.Fatalf("%d of %d generated arguments were clean: the generator does not exercise both paths", fast, seen)
	}
	t.Logf("%d of %d generated arguments clean", fast, seen)
}

func FuzzRedactWith_UnchangedArgumentsAreTheRebuildsAnswer(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `{"token":"x"}`, `{"k":["ghp_` + strings.Repeat("a1B2", 9) + `"]}`, `{"a":"\u0041"}`, `[1,2,{"b":null}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) { sameRedaction(t, args) })
}

// BenchmarkRedact100KB is the audit record's redaction of arguments holding one
// 100 KB string and no secret: RedactWith beside the full rebuild it skips when
// nothing is to be redacted.
func BenchmarkRedact100KB(b *testing.B) {
	args, _ := json.Marshal(map[string]any{"path": "notes/today.md", "text": strings.Repeat("the quick brown fox: jumps over=the lazy dog ", 100<<10/45)})
	r := redactor{}
	b.Run("RedactWith", func(b *testing.B) {
		for b.Loop() {
			RedactWith(args, nil)
		}
	})
	b.Run("rebuild", func(b *testing.B) {
		for b.Loop() {
			r.redactRaw(args, 0)
		}
	})
}

// BenchmarkRedactManyKeys is the redaction of an object of 20,000 plain members,
// clean and with a token in its last value (then read once and rebuilt).
func BenchmarkRedactManyKeys(b *testing.B) {
	m := map[string]string{}
	for i := range 20_000 {
		m["field_"+strconv.Itoa(i)] = "value " + strconv.Itoa(i)
	}
	clean, _ := json.Marshal(m)
	m["field_19999"] = "ghp_" + strings.Repeat("a1B2", 9)
	secret, _ := json.Marshal(m)
	r := redactor{}
	for _, c := range []struct {
		name string
		args []byte
	}{{"clean", clean}, {"secret", secret}} {
		b.Run(c.name+"/RedactWith", func(b *testing.B) {
			for b.Loop() {
				RedactWith(c.args, nil)
			}
		})
		b.Run(c.name+"/rebuild", func(b *testing.B) {
			for b.Loop() {
				r.redactRaw(c.args, 0)
			}
		})
	}
}
