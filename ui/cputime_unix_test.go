//go:build unix

package ui

import (
	"syscall"
	"time"
)

// cpuTime is the process's user and system CPU time so far. Timing tests measure
// it rather than the wall clock, so that a busy machine does not fail them.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
