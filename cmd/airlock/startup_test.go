package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestStartup_PackageInitsAllocateLittle keeps airlock's own package initialisation
// small: every command, and every `airlock demo-server` child, pays it before doing
// anything (bench/run row 1 compares whole processes with a bare go-sdk client).
// Compiling regular expressions at start was 2,100 allocations and 207 kB (a sixth of
// the process's start-up CPU, perf); they are compiled on first use now.
func TestStartup_PackageInitsAllocateLittle(t *testing.T) {
	cmd := asAirlock(t, nil, []string{"GODEBUG=inittrace=1"}, "version")
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("airlock version: %v\n%s", err, errb.String())
	}
	// init github.com/airlock-mcp/airlock/session @1.2 ms, 0.39 ms clock, 2488 bytes, 21 allocs
	const budget = 48 << 10
	total, seen := 0, 0
	var per []string
	for _, line := range strings.Split(errb.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/airlock-mcp/airlock/") {
			continue
		}
		var bytesN int
		if _, err := fmt.Sscanf(f[7], "%d", &bytesN); err != nil || f[8] != "bytes," {
			t.Fatalf("cannot read the inittrace line %q", line)
		}
		seen++
		total += bytesN
		per = append(per, fmt.Sprintf("%s %d bytes", strings.TrimPrefix(f[1], "github.com/airlock-mcp/airlock/"), bytesN))
	}
	if seen < 5 {
		t.Fatalf("inittrace named %d of airlock's packages, want them all; stderr:\n%s", seen, errb.String())
	}
	if total > budget {
		t.Errorf("airlock's packages allocate %d bytes at start, want at most %d (compile on first use):\n%s", total, budget, strings.Join(per, "\n"))
	}
}
