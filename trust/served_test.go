package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var servedRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func hash4(q string) string {
	sum := sha256.Sum256([]byte(q))
	return hex.EncodeToString(sum[:])[:4]
}

func TestServedNames(t *testing.T) {
	long := strings.Repeat("read_every_note_", 8) // 128 bytes
	tests := []struct {
		name   string
		refs   []Ref
		budget int
		want   map[Ref]string // "" means: given no name
	}{
		{
			name: "names that fit are served as they are",
			refs: []Ref{{"notes", "get_item"}, {"notes", "get-item"}, {"a", "B9"}},
			want: map[Ref]string{{"notes", "get_item"}: "notes__get_item", {"notes", "get-item"}: "notes__get-item", {"a", "B9"}: "a__B9"},
		},
		{
			name: "a dot is mapped: stem and hash",
			refs: []Ref{{"notes", "get.item"}},
			want: map[Ref]string{{"notes", "get.item"}: "notes__get_item_" + hash4("notes__get.item")},
		},
		{
			name: "a 128-byte name keeps the end of its tool name",
			refs: []Ref{{"notes", long}},
			want: map[Ref]string{{"notes", long}: "notes__" + long[len(long)-32:] + "_" + hash4("notes__"+long)},
		},
		{
			name:   "exactly the budget is served as it is",
			refs:   []Ref{{"notes", strings.Repeat("x", 37)}},
			budget: 44,
			want:   map[Ref]string{{"notes", strings.Repeat("x", 37)}: "notes__" + strings.Repeat("x", 37)},
		},
		{
			name:   "one byte over the budget is mapped",
			refs:   []Ref{{"notes", strings.Repeat("x", 38)}},
			budget: 44,
			want:   map[Ref]string{{"notes", strings.Repeat("x", 38)}: "notes__" + strings.Repeat("x", 32) + "_" + hash4("notes__"+strings.Repeat("x", 38))},
		},
		{
			name: "control characters and invalid UTF-8 become _",
			refs: []Ref{{"evil", "a\x1b[2J\xffé"}},
			want: map[Ref]string{{"evil", "a\x1b[2J\xffé"}: "evil__a__2J___" + hash4("evil__a\x1b[2J\xffé")},
		},
		{
			name: "a tool named like another's mapped form keeps its name; the mapped one grows",
			refs: []Ref{{"notes", "get.item"}, {"notes", "get_item_" + hash4("notes__get.item")}},
			want: map[Ref]string{
				{"notes", "get_item_" + hash4("notes__get.item")}: "notes__get_item_" + hash4("notes__get.item"),
				{"notes", "get.item"}:                             "notes__get_item_" + hashN("notes__get.item", 5),
			},
		},
		{
			name:   "below room for a stem, the hash alone",
			refs:   []Ref{{"notes", "get.item"}},
			budget: 5,
			want:   map[Ref]string{{"notes", "get.item"}: hashN("notes__get.item", 4)},
		},
		{
			name:   "a budget of one",
			refs:   []Ref{{"notes", "get.item"}},
			budget: 1,
			want:   map[Ref]string{{"notes", "get.item"}: hashN("notes__get.item", 1)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MapServedNames(tt.refs, tt.budget)
			got := map[Ref]string{}
			for _, r := range tt.refs {
				got[r], _ = s.Name(r)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("served names (-want +got):\n%s", diff)
			}
			for r, name := range got {
				if name == "" {
					continue
				}
				back, ok := s.Lookup(name)
				if !ok || back != r {
					t.Errorf("Lookup(%q) = %v %v, want %v", name, back, ok, r)
				}
			}
		})
	}
}

func hashN(q string, n int) string {
	sum := sha256.Sum256([]byte(q))
	return hex.EncodeToString(sum[:])[:n]
}

// checkServed asserts what every mapping promises: each name matches the pattern
// within the budget, and no two refs share one.
func checkServed(t *testing.T, s *ServedNames, refs []Ref, budget int) map[Ref]string {
	t.Helper()
	out := map[Ref]string{}
	owner := map[string]Ref{}
	for _, r := range refs {
		name, ok := s.Name(r)
		if !ok {
			continue
		}
		if !servedRe.MatchString(name) || len(name) > ServedNameBudget(budget) {
			t.Fatalf("%v is served as %q (%d bytes): not a name clients accept within %d", r, name, len(name), budget)
		}
		if o, dup := owner[name]; dup && o != r {
			t.Fatalf("%v and %v are both served as %q", o, r, name)
		}
		owner[name] = r
		out[r] = name
	}
	return out
}

// Two names whose stems are the same, thousands of them, and every budget: the
// served names are valid and distinct, whatever order the refs come in.
func TestServedNamesCollisionFreeAndOrderIndependent(t *testing.T) {
	var refs []Ref
	for i := range 10000 {
		// Every one of these has the stem notes__get_item_... cut at the budget.
		refs = append(refs, Ref{"notes", fmt.Sprintf("get.item.%0120d", i)})
	}
	refs = append(refs, Ref{"notes", "get.item"}, Ref{"notes", "get-item"}, Ref{"notes", "get_item"})
	budget := 44
	first := checkServed(t, MapServedNames(refs, budget), refs, budget)
	if len(first) != len(refs) {
		t.Errorf("%d of %d refs are served", len(first), len(refs))
	}
	shuffled := append([]Ref(nil), refs...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	shuffled = append(shuffled, refs[:10]...) // listed twice counts once
	second := checkServed(t, MapServedNames(shuffled, budget), refs, budget)
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("the mapping depends on order (-first +second):\n%s", diff)
	}
}

// At small budgets the hash alone cannot tell every tool apart: those that still
// clash get no name, and every one that has a name has its own.
func TestServedNamesSmallBudgets(t *testing.T) {
	var refs []Ref
	for i := range 40 {
		refs = append(refs, Ref{"s", fmt.Sprintf("t.%d", i)}, Ref{"s", fmt.Sprintf("t%d", i)})
	}
	for budget := 1; budget <= MaxServedNameLen; budget++ {
		s := MapServedNames(refs, budget)
		got := checkServed(t, s, refs, budget)
		if budget >= 12 && len(got) != len(refs) {
			t.Errorf("budget %d: %d of %d refs have a name", budget, len(got), len(refs))
		}
	}
}

func TestServableAsIsAndBudget(t *testing.T) {
	if ServedNameBudget(0) != DefaultNameBudget || ServedNameBudget(65) != DefaultNameBudget || ServedNameBudget(64) != 64 {
		t.Error("ServedNameBudget does not default out-of-range budgets")
	}
	if got := MappedBecause(Ref{"notes", "get.item"}, 44); !strings.Contains(got, "characters") {
		t.Errorf("MappedBecause(dotted) = %q", got)
	}
	if got := MappedBecause(Ref{"notes", strings.Repeat("x", 60)}, 44); !strings.Contains(got, "44-byte") {
		t.Errorf("MappedBecause(long) = %q", got)
	}
	if got := MappedBecause(Ref{"notes", "x"}, 44); got != "" {
		t.Errorf("MappedBecause(fits) = %q", got)
	}
	var nilNames *ServedNames
	if n, ok := nilNames.Name(Ref{"notes", "x"}); !ok || n != "notes__x" {
		t.Errorf("nil mapping: %q %v", n, ok)
	}
	if _, ok := nilNames.Lookup("notes__get.item"); ok {
		t.Error("Lookup reads back an original dotted name")
	}
}

// BenchmarkMapServedNames maps 10,000 tools: all served as they are (the common
// case: no hash, no map), and all mapped, thousands sharing one stem.
func BenchmarkMapServedNames(b *testing.B) {
	for _, tc := range []struct {
		name   string
		format string
	}{{"as-is", "tool_%05d"}, {"mapped", "get.item.%0120d"}} {
		refs := make([]Ref, 10000)
		for i := range refs {
			refs[i] = Ref{"notes", fmt.Sprintf(tc.format, i)}
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				MapServedNames(refs, DefaultNameBudget)
			}
		})
	}
}

// A mapped name keeps SERVER__ and the end of the tool's name, where its verb
// usually is: two tools of one long family differ in more than their hash.
func TestServedNamesKeepTheToolsEnd(t *testing.T) {
	const server = "github-enterprise-mirror"
	del := Ref{server, "github.repos.content.delete_permanently"}
	get := Ref{server, "github.repos.content.get"}
	s := MapServedNames([]Ref{del, get}, 0)
	for _, tc := range []struct {
		ref  Ref
		word string
	}{{del, "permanently"}, {get, "get"}} {
		name, ok := s.Name(tc.ref)
		if !ok {
			t.Fatalf("%v has no served name", tc.ref)
		}
		stem := strings.TrimSuffix(name, "_"+hash4(tc.ref.Qualified()))
		if !strings.HasPrefix(stem, server+"__") || !strings.HasSuffix(stem, tc.word) || stem == name {
			t.Errorf("%v is served as %q: want %s__, the end of its tool's name (%q) and its hash", tc.ref, name, server, tc.word)
		}
	}
	// Whatever the lengths, a mapped name's stem ends as its tool's stem ends.
	long := strings.Repeat("s", 60)
	for _, r := range []Ref{{server, strings.Repeat("a.", 60) + "delete"}, {long, "x.delete"}, {long, strings.Repeat("b.", 50) + "drop_all"}} {
		for budget := 12; budget <= MaxServedNameLen; budget++ {
			name, ok := MapServedNames([]Ref{r}, budget).Name(r)
			if !ok || len(name) > budget {
				t.Fatalf("budget %d: %v is served as %q", budget, r, name)
			}
			tail := r.Tool[strings.LastIndexByte(r.Tool, '.')+1:]
			if stem := strings.TrimSuffix(name, "_"+hash4(r.Qualified())); !strings.HasSuffix(stem, tail[max(len(tail)-(budget-5)/4, 0):]) {
				t.Errorf("budget %d: %v is served as %q, without the end of its tool's name", budget, r, name)
			}
		}
	}
}
