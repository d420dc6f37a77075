package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// drainInput discards what was typed on the terminal f and not read yet, so that a
// question is never answered by keys typed before it was shown.
func drainInput(f *os.File) func() {
	return func() { _ = unix.IoctlSetInt(int(f.Fd()), unix.TCFLSH, unix.TCIFLUSH) }
}
