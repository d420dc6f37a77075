package trust

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestCanonicalArgs(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{``, `{}`, ""},
		{` {} `, `{}`, ""},
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`, ""},
		{`{"a":"\u0041\/\n\u0001"}`, `{"a":"A/\n\u0001"}`, ""},
		{`{"a":"\ud83d\ude00"}`, `{"a":"😀"}`, ""},
		{`{"n":[-0,1.5e+3,0.25E-2]}`, `{"n":[-0,1.5e+3,0.25E-2]}`, ""},
		// RFC 8785 key order is by UTF-16 code units: U+FF61 sorts after U+1F600's high surrogate.
		{`{"｡":1,"😀":2,"a":3}`, `{"a":3,"😀":2,"｡":1}`, ""},
		{`{"channel":"#team","ch\u0061nnel":"#public"}`, "", `duplicate key "channel"`},
		{`{"a":{"b":1,"b":2}}`, "", `duplicate key "a.b"`},
		{`{"a":[{"x":1,"\u0078":2}]}`, "", `duplicate key "a[0].x"`},
		{"{\"a\":\"\xff\"}", "", "UTF-8"},
		{`{"a":"\udc00"}`, "", "lone surrogate"},
		{`{"a":"\ud800x"}`, "", "lone surrogate"},
		{`[1]`, "", "JSON object"},
		{` null `, `{}`, ""},
		{`nullx`, "", "JSON object"},
		{`{"a":1}x`, "", "after the object"},
		{`{"a":01}`, "", "expected ','"},
		{`{"a":tru}`, "", "invalid JSON"},
		{`{"a":"x` + "\n" + `"}`, "", "control character"},
		{`{"a":` + strings.Repeat("[", MaxArgsDepth) + strings.Repeat("]", MaxArgsDepth) + `}`, "", "nested deeper"},
	}
	for _, c := range cases {
		got, err := CanonicalArgs([]byte(c.in), 0)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%.40q: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%.40q = %s, %v; want %s", c.in, got, err, c.want)
			continue
		}
		again, err := CanonicalArgs(got, 0)
		if err != nil || string(again) != string(got) {
			t.Errorf("%s is not a fixed point: %s %v", got, again, err)
		}
		if !json.Valid(got) {
			t.Errorf("%s is not valid JSON", got)
		}
	}
	if _, err := CanonicalArgs([]byte(`{"a":"12345"}`), 10); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("over the limit: %v", err)
	}
}

// The canonical bytes decode to the same value as the input, whatever the input.
func FuzzCanonicalArgs(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"b":[1,{"c":"\u00e9"}],"a":null}`, `{"x":"\ud83d\ude00"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := CanonicalArgs(in, 0)
		if err != nil {
			return
		}
		var a, b any
		if json.Unmarshal(in, &a) != nil && len(strings.TrimSpace(string(in))) > 0 {
			t.Fatalf("accepted %q, which encoding/json refuses", in)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("canonical %q does not decode: %v", out, err)
		}
		again, err := CanonicalArgs(out, 0)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not a fixed point: %q -> %q (%v)", out, again, err)
		}
	})
}

// BenchmarkCanonicalArgs is one call's arguments made canonical: a dozen members
// out of order, nested objects and arrays, escapes and non-ASCII text.
func BenchmarkCanonicalArgs(b *testing.B) {
	raw := []byte(`{"path":"/home/user/notes/2026/december.md","edits":[{"oldText":"line one\nline two","newText":"line \u00e9 one\n\"quoted\""},{"oldText":"tab\there","newText":"caf\u00e9 😀"}],"dryRun":false,"limit":120,"offset":-3.5e2,"options":{"z":true,"a":null,"m":[1,2,3,{"k":"v"}]},"author":"Zoë","tags":["a","b","c"]}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CanonicalArgs(raw, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// compareUTF16 orders strings as comparing their whole UTF-16 encodings does.
func TestCompareUTF16AsEncoded(t *testing.T) {
	words := []string{"", "a", "ab", "b", "\u00e9", "\uff61", "\uffff", "\U00010000", "\U0001F600", "\U0001F601",
		"\U0010FFFF", "\U0001F600a", "a\U0001F600", "\ufffd", "\xff", "\xffa", "a\xff", "\ud7ff", "\ue000"}
	for _, a := range words {
		for _, b := range words {
			want := slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
			if got := compareUTF16(a, b); got != want {
				t.Errorf("compareUTF16(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}

func FuzzCompareUTF16(f *testing.F) {
	f.Add("\uff61", "\U0001F600")
	f.Add("a\xff", "a\ufffd")
	f.Fuzz(func(t *testing.T, a, b string) {
		want := slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		if got := compareUTF16(a, b); got != want {
			t.Fatalf("compareUTF16(%q, %q) = %d, want %d", a, b, got, want)
		}
	})
}
