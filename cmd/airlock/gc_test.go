package main

import "testing"

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
