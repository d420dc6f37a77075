package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

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
