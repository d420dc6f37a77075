package session

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestPlainString_SameAsUnmarshal: decodeWireTool takes a plain ASCII string field
// as it is instead of calling json.Unmarshal; whatever plainString accepts must be
// what Unmarshal gives, and it must refuse what needs decoding.
func TestPlainString_SameAsUnmarshal(t *testing.T) {
	seeds := []string{`"send"`, `""`, `"a b"`, `"a\"b"`, `"a\\b"`, `"\u0041"`, "\"tab\there\"", "\"bad\xff\"", `"é"`, "\"\x7f\"", `"<&>"`, `12`, `null`, `"x`, `x"`, `"`, `true`, `{"a":"b"}`, "\"\u2028\""}
	r := rand.New(rand.NewPCG(2, 16))
	for range 20000 {
		b := make([]byte, r.IntN(8))
		for i := range b {
			b[i] = byte(r.IntN(256))
			if r.IntN(2) == 0 {
				const alphabet = "\"\\ a\x00\x7f\xc3\xa9u"
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
		}
		seeds = append(seeds, `"`+string(b)+`"`)
	}
	for _, in := range seeds {
		got, ok := plainString(json.RawMessage(in))
		if !ok {
			continue
		}
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil || got != want {
			t.Fatalf("plainString(%q) = %q; Unmarshal gives %q, %v", in, got, want, err)
		}
	}
	if _, ok := plainString(json.RawMessage(`"send"`)); !ok {
		t.Fatal("a plain name was left to Unmarshal")
	}
}

// TestParseListing_ParallelSameAsSequential: a long listing is parsed on several
// goroutines; the tools, their order, the skipped entries and the notices are those
// of parsing one tool after another.
func TestParseListing_ParallelSameAsSequential(t *testing.T) {
	var raws []json.RawMessage
	for i := range 3000 {
		var raw string
		switch i % 7 {
		case 0:
			raw = `"not a tool"`
		case 1:
			raw = fmt.Sprintf(`{"name":"t%d","description":"D\u00e9 %d","annotations":{"title":"T","readOnlyHint":true},"inputSchema":{"type":"object","properties":{"q":{"type":"string","description":"query"}}}}`, i, i)
		case 2:
			raw = `{"name":"dup","inputSchema":{"type":"object"}}`
		case 3:
			raw = fmt.Sprintf(`{"name":"bad name %d","title":"x","execution":{"taskSupport":"optional"}}`, i)
		default:
			raw = fmt.Sprintf(`{"name":"t%d","name":"u%d","inputSchema":{"type":"object"}}`, i, i)
		}
		raws = append(raws, json.RawMessage(raw))
	}
	got, gotNotices := parseListing(raws)
	var want []listedTool
	skipped := 0
	for _, raw := range raws {
		if t, ok := parseTool(raw); ok {
			want = append(want, t)
		} else {
			skipped++
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d tools, want %d", len(got), len(want))
	}
	for i := range want {
		w := want[i]
		w.nameProblem = got[i].nameProblem // set after, from the names
		if !reflect.DeepEqual(got[i], w) {
			t.Fatalf("tool %d differs:\n got %+v\nwant %+v", i, got[i], w)
		}
	}
	if len(gotNotices) == 0 || gotNotices[0] != fmt.Sprintf("%d entries of tools/list were not tool objects and were skipped", skipped) {
		t.Fatalf("notices %q", gotNotices)
	}
}
