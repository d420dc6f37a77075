//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// q quits the TUI within 5 s (about 2 s; the test fails only past 10 s, so that a
// loaded machine does not fail it) while a server has stopped reading its stdin with
// airlock's answers to its requests stuck in the pipe, ignores SIGTERM and has a child
// holding its pipes; neither process outlives airlock.
func TestTUI_QuitWithStalledServer(t *testing.T) {
	self := selfPath(t)
	state := t.TempDir()
	pidfile := filepath.Join(state, "pids")
	cfg := writeConfig(t, fmt.Sprintf("state_dir = %q\n[servers.stall]\ncommand = %q\ntrust = \"trusted\"\n"+
		"env = { AIRLOCK_TEST_SERVER = \"stall\", AIRLOCK_TEST_STALL = \"pings,noterm,child\", AIRLOCK_TEST_PIDFILE = %q }\n",
		filepath.Join(state, "airlock"), self, pidfile))
	s := startScreenIn(t, state, "--config", cfg)
	s.waitFor("1/1")
	var pids []int
	deadline := time.Now().Add(20 * time.Second)
	for len(pids) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the server never wrote its pids; screen:\n%s", s.text())
		}
		time.Sleep(20 * time.Millisecond)
		b, _ := os.ReadFile(pidfile)
		pids = pids[:0]
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
	}
	time.Sleep(500 * time.Millisecond) // the answers to the pings fill the pipe
	began := time.Now()
	s.keys("q")
	select {
	case err := <-s.done:
		took := time.Since(began)
		t.Logf("airlock quit %v after q", took.Round(time.Millisecond))
		if err != nil {
			t.Errorf("airlock exited with %v; screen:\n%s", err, s.text())
		}
	case <-time.After(10 * time.Second):
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("airlock had not quit 10 s after q; screen:\n%s", s.text())
	}
	for _, pid := range pids {
		for deadline := time.Now().Add(2 * time.Second); syscall.Kill(pid, 0) == nil && !zombie(pid); {
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("server process %d outlived airlock", pid)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// zombie reports whether pid has exited and waits to be reaped (Linux's /proc; false
// where there is none).
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}
