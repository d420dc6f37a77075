//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A FIFO where an agent keeps its config (a cloned project's .mcp.json) would hold a
// reader forever: check says it cannot read it and goes on.
func TestCheck_AgentConfigFIFODoesNotHang(t *testing.T) {
	a := newAgentCheck(t, "15m")
	if err := syscall.Mkfifo(filepath.Join(a.cwd, ".mcp.json"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	w := a.warnings()
	if len(w) != 1 || !strings.HasPrefix(w[0], "agent config: Claude Code: cannot read "+filepath.Join(a.cwd, ".mcp.json")+": not a regular file") {
		t.Fatalf("warnings %q", w)
	}
}
