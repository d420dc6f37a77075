//go:build unix

package main

import (
	"os"
	"strings"
	"syscall"
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
	env := append(os.Environ(), "GORACE="+strings.TrimSpace(gorace+" atexit_sleep_ms=0"))
	_ = syscall.Exec(self, os.Args, env)
}
