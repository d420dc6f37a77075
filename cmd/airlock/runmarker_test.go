//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A crashed TUI's marker is the TUI's to say: `airlock call` (often run by a
// script whose output nobody reads) leaves it, and the next TUI says it once. A
// crashed `airlock call`'s marker is said by the next `airlock call`.
func TestStartRun_OneShotLeavesTheTUIsNotice(t *testing.T) {
	state := t.TempDir()
	dead := func() int {
		c := exec.Command("true")
		if err := c.Run(); err != nil {
			t.Fatal(err)
		}
		return c.Process.Pid
	}
	if err := os.MkdirAll(filepath.Join(state, runDir), 0o700); err != nil {
		t.Fatal(err)
	}
	marker := func(pid int, command string) {
		b := `{"pid":` + strconv.Itoa(pid) + `,"command":"` + command + `","started":"2026-12-01T10:00:00Z"}` + "\n"
		if err := os.WriteFile(filepath.Join(state, runDir, strconv.Itoa(pid)+".json"), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tuiPID, callPID := dead(), dead()
	marker(tuiPID, "airlock")
	marker(callPID, "airlock call")

	notices, done := startRun(state, "airlock call", true)
	done()
	if s := strings.Join(notices, "\n"); !strings.Contains(s, "airlock call (pid "+strconv.Itoa(callPID)) || strings.Contains(s, "pid "+strconv.Itoa(tuiPID)) {
		t.Errorf("airlock call said %q; want the crashed call's marker only", s)
	}
	notices, done = startRun(state, "airlock", false)
	done()
	if s := strings.Join(notices, "\n"); !strings.Contains(s, "pid "+strconv.Itoa(tuiPID)) || strings.Contains(s, "pid "+strconv.Itoa(callPID)) {
		t.Errorf("the next TUI said %q; want the crashed TUI's marker, once", s)
	}
	notices, done = startRun(state, "airlock", false)
	done()
	if len(notices) != 0 {
		t.Errorf("a third start said %q; want nothing left", notices)
	}
}
