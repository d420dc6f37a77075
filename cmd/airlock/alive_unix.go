//go:build unix

package main

import (
	"errors"
	"syscall"
)

// processAlive reports whether process pid exists (one of another user counts:
// it may be running airlock on a shared state dir).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
