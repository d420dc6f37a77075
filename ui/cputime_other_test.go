//go:build !unix

package ui

import "time"

var start = time.Now()

// cpuTime falls back to the wall clock where getrusage does not exist.
func cpuTime() time.Duration { return time.Since(start) }
