package secrets

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/jsongen"
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

// redactLiterals are the numbers generated arguments hold besides small integers:
// some hold the digits-only Known, one only part of it.
var redactLiterals = []string{"true", "false", "null", "1e3", "-0.5", "123456789", "-12345678.5e1", "1234567"}

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
	gen := jsongen.Gen{R: rand.New(rand.NewPCG(1, 2)), Strings: redactPieces, Literals: redactLiterals}
	r := gen.R
	var b bytes.Buffer
	fast, seen := 0, 0
	for range 10_000 {
		b.Reset()
		gen.Value(&b, 1+r.IntN(5))
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
