//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An airlock killed with its gateway running (kill -9: nothing of it runs on exit)
// leaves its gateway.addr and its run marker behind. The address is ignored at once
// (snippet does not send agents to a gateway that is gone). An `airlock call`
// meanwhile leaves the TUI's notice alone (a script that calls reads no stderr);
// the next TUI says that the last one did not shut down cleanly, once, removing
// both. A clean exit leaves neither.
func TestE2E_UncleanShutdownNoticedStaleAddrIgnored(t *testing.T) {
	state := t.TempDir()
	cfg := docsConfig(t, state)
	addr := freeAddr(t)
	s := startScreenIn(t, t.TempDir(), "--config", cfg, "--gateway", addr)
	s.waitFor("get_doc")
	pid := s.cmd.Process.Pid
	if r := airlock(t, "", "gateway", "snippet", "claude", "--config", cfg); !strings.Contains(r.stdout, "http://"+addr+"/mcp") {
		t.Fatalf("snippet while the gateway runs: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	get := []string{"call", "docs", "get_doc", "--config", cfg, "--args", `{"id":"mcp-overview"}`}
	// Another airlock on the same state dir, while the first runs: nothing to say.
	if r := airlock(t, "", get...); r.code != 0 || strings.Contains(r.stderr, "shut down") {
		t.Fatalf("a call beside a running airlock: exit %d\n%s", r.code, r.stderr)
	}
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the killed airlock did not end")
	}
	if _, err := os.Stat(filepath.Join(state, "gateway.addr")); err != nil {
		t.Fatalf("kill -9 left no gateway.addr to test with: %v", err)
	}
	if r := airlock(t, "", "gateway", "snippet", "claude", "--config", cfg); strings.Contains(r.stdout, addr) {
		t.Errorf("snippet sends agents to the gateway of a process that is gone:\n%s", r.stdout)
	}
	if r := airlock(t, "", get...); r.code != 0 || strings.Contains(r.stderr, "shut down") {
		t.Fatalf("airlock call took the TUI's notice: exit %d\n%s", r.code, r.stderr)
	}
	next := startScreenIn(t, t.TempDir(), "--config", cfg)
	next.waitFor("get_doc")
	// The status line says it first; a server's status may replace it at once,
	// and Activity keeps it.
	next.keys("v")
	next.waitFor("did not shut down")
	if txt := next.text(); !strings.Contains(txt, "pid ") {
		t.Errorf("the next TUI's notice names no pid:\n%s", txt)
	}
	next.keys(keyEsc)
	if _, err := os.Stat(filepath.Join(state, "gateway.addr")); err == nil {
		t.Error("the dead gateway's gateway.addr is still there")
	}
	next.keys("q")
	next.waitExit("the next TUI", 15*time.Second)
	if r := airlock(t, "", get...); r.code != 0 || strings.Contains(r.stderr, "shut down") {
		t.Errorf("said twice, or a clean exit left a marker: exit %d\n%s", r.code, r.stderr)
	}
	if left, _ := os.ReadDir(filepath.Join(state, "run")); len(left) != 0 {
		t.Errorf("run markers left after clean exits: %v (pid %d was killed)", left, pid)
	}
}
