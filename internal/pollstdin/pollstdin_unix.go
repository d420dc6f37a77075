//go:build unix

package pollstdin

import (
	"os"
	"syscall"
)

// Stdin returns stdin read through Go's network poller when it is a pipe or a
// socket, and os.Stdin otherwise (a terminal's file description is shared with the
// shell, whose reads a non-blocking flag would break).
//
// Read as os.Stdin is, an inherited pipe is blocking: the goroutine reading it holds an
// OS thread in read(2) while the process waits for its next message. A demo server
// built with go1.26.8 and called in a loop through airlock's gateway hung that way 5
// times in about 3.2 million calls: a collection began while a request was being
// decoded, and its stop-the-world did not end until the thread in read(2) returned,
// which it did only when the client sent its next message (the cancellation at the
// call timeout, 60 s later). Through the poller no thread waits in read(2). `airlock demo-server`
// and `airlock bridge`, whose stdin is the client's pipe, read it so.
func Stdin() *os.File {
	var st syscall.Stat_t
	if err := syscall.Fstat(0, &st); err != nil {
		return os.Stdin
	}
	if kind := st.Mode & syscall.S_IFMT; kind != syscall.S_IFIFO && kind != syscall.S_IFSOCK {
		return os.Stdin
	}
	if err := syscall.SetNonblock(0, true); err != nil {
		return os.Stdin
	}
	// os.NewFile registers a descriptor that is already non-blocking with the poller.
	return os.NewFile(0, "/dev/stdin")
}
