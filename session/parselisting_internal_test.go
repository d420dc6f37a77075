package session

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

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
