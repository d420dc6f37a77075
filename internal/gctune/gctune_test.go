package gctune

import (
	"math"
	"testing"
)

func TestGCPercentFor_HeadroomAboveSmallHeapsDefaultAboveIt(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},          // nothing measured yet
		{100 << 10, 2000}, // a heap of 100 KB: capped
		{2 << 20, 800},    // 2 MiB live: goal 18 MiB
		{4 << 20, 400},    // the gateway's usual 4 MiB: goal 20 MiB
		{5 << 20, 300},    // 320% rounded down to a step of 50
		{12 << 20, 100},   // 133%: rounded down, never below Go's default
		{16 << 20, 100},   // from here the heap doubles as with GOGC=100
		{400 << 20, 100},  // thousands of tools
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// The budget is a base and two copies of the waiting bytes; the limit it sets is
// never closer to the live heap than a quarter plus 16 MiB, and a small heap keeps
// its own lower limit.
func TestLimitFor_BudgetBoundsTheHeapButNeverTheLiveSet(t *testing.T) {
	budget := Budget(32 << 20)
	if budget != 128<<20 {
		t.Fatalf("Budget(32 MiB) = %d, want 128 MiB", budget)
	}
	if Budget(0) != 0 {
		t.Fatal("no waiting bound is no budget")
	}
	for _, c := range []struct {
		name    string
		live    uint64
		percent int
		budget  int64
		want    int64
	}{
		{"no gateway, large heap: no limit", 100 << 20, 100, 0, math.MaxInt64},
		{"no gateway, small heap: its own limit", 4 << 20, 400, 0, 32 << 20},
		{"gateway, small heap: the small heap's limit is lower", 4 << 20, 400, budget, 32 << 20},
		{"gateway, calls waiting: the budget", 86 << 20, 100, budget, budget},
		{"gateway, a live heap past the budget: a quarter above it", 200 << 20, 100, budget, 266 << 20},
	} {
		if got := limitFor(c.live, c.percent, c.budget); got != c.want {
			t.Errorf("%s: limitFor(%d MiB, %d, %d MiB) = %d MiB, want %d MiB", c.name, c.live>>20, c.percent, c.budget>>20, got>>20, c.want>>20)
		}
	}
}
