//go:build unix

package sessiontest

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Alive reports whether process pid runs (a zombie, exited but not yet reaped, does
// not count where /proc tells them apart).
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err) || !procMounted()
	}
	fields := strings.Fields(string(b))
	return len(fields) > 2 && fields[2] != "Z"
}

func procMounted() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}
