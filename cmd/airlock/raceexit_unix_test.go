//go:build unix

package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// noRaceExitSleep makes this process, and every process started from it, exit
// without the race runtime's second of sleep (its atexit_sleep_ms, read once at
// start). The package's tests start the test binary hundreds of times, as airlock
// and as the servers airlock starts, and each airlock waits for its servers to
// exit: at a second a process that was most of the package's time. A server gets
// only a minimal environment, so GORACE does not reach it from its airlock; it is
// started again here with GORACE set, which costs one exec. Races are still
// reported when they happen and still make the process exit 66. If the exec
// fails, the process goes on as it is.
func noRaceExitSleep() {
	gorace := os.Getenv("GORACE")
	if !raceBuild || strings.Contains(gorace, "atexit_sleep_ms") {
		return
	}
	self, err := os.Executable()
	if err != nil {
		return
	}
	// Set, not appended: with GORACE twice in the environment the first is read,
	// and the process would start itself again for ever.
	if os.Setenv("GORACE", strings.TrimSpace(gorace+" atexit_sleep_ms=0")) != nil {
		return
	}
	_ = syscall.Exec(self, os.Args, os.Environ())
}

// A GORACE of the caller's own, without atexit_sleep_ms, is kept and added to,
// once: the process starts itself again one time and then runs.
func TestNoRaceExitSleep_KeepsTheCallersGORACE(t *testing.T) {
	if !raceBuild {
		t.Skip("only a -race build starts itself again")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, selfPath(t), "--help")
	cmd.Env = append(os.Environ(), "AIRLOCK_AS_MAIN=1", "GORACE=halt_on_error=1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil || err != nil || !strings.Contains(string(out), "Exit codes:") {
		t.Fatalf("airlock --help with GORACE=halt_on_error=1: %v, %v\n%.300s", ctx.Err(), err, out)
	}
}
