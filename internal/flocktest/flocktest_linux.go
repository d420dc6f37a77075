package flocktest

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Waiter waits up to within until some open file waits for the flock on path (a
// "->" line of /proc/locks for path's inode) and reports whether one did. It
// skips the test when /proc/locks cannot be read.
func Waiter(t testing.TB, path string, within time.Duration) bool {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ino := fmt.Sprintf(":%d ", fi.Sys().(*syscall.Stat_t).Ino)
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/locks")
		if err != nil {
			t.Skip("no /proc/locks:", err)
		}
		for line := range strings.Lines(string(b)) {
			if strings.Contains(line, "->") && strings.Contains(line, "FLOCK") && strings.Contains(line, ino) {
				return true
			}
		}
		time.Sleep(time.Millisecond)
	}
	return false
}
