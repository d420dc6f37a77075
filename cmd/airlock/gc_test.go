package main

import (
	"bytes"
	"fmt"
	"strings"
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

// TestTuneGC_OneShotCommandsCollectNothingWhileSmall: `airlock check` on 12 stdio
// servers allocates a few MB with little of it live; it starts at oneShotFirstGC, so
// it makes no collection at all (Go's default made two or three while the servers
// started, each stop-the-world waiting for threads descheduled among the children:
// bench/analysis.md, seventh session). GOGC set by the person still wins.
func TestTuneGC_OneShotCommandsCollectNothingWhileSmall(t *testing.T) {
	state := t.TempDir()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "state_dir = %q\n", state)
	for i := range 12 {
		fmt.Fprintf(&cfg, "[servers.docs-%02d]\ncommand = \"airlock\"\nargs = [\"demo-server\", \"docs\"]\ntrust = \"trusted\"\n", i)
	}
	path := writeConfig(t, cfg.String())
	collections := func(env ...string) int {
		t.Helper()
		cmd := asAirlock(t, nil, append([]string{"XDG_STATE_HOME=" + state, "GODEBUG=gctrace=1"}, env...), "check", "--config", path, "--json")
		var errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = nil, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("airlock check: %v\n%s", err, errb.String())
		}
		n := 0
		for _, line := range strings.Split(errb.String(), "\n") {
			if strings.HasPrefix(line, "gc ") {
				n++
			}
		}
		return n
	}
	collections() // the servers' first sight: pins written
	if n := collections(); n != 0 {
		t.Errorf("airlock check on 12 servers made %d collections, want none while its heap is small", n)
	}
	if n := collections("GOGC=25"); n == 0 {
		t.Errorf("with GOGC=25 set, airlock check made no collection: the person's setting must win (or the run no longer allocates enough to tell)")
	}
}
