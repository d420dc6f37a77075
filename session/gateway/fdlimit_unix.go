//go:build unix

package gateway

import "syscall"

// fdLimit is the process's descriptor limit (RLIMIT_NOFILE, the soft limit, which
// Go raises to the hard one at start), or 0 when it cannot be read.
func fdLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur > 1<<30 {
		return 0
	}
	return int(r.Cur)
}
