//go:build unix

package audit_test

import "syscall"

// mkfifo makes a named pipe at path, the state file a reader must never block on.
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
