//go:build unix

package importer

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// openAgentFile opens path for reading without blocking (a FIFO planted at path
// cannot hang the open) and, unless follow, without following a link at path:
// the link fails the open and is never read through.
func openAgentFile(path string, follow bool) (*os.File, error) {
	flag := os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	if !follow {
		flag |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil && !follow && !errors.Is(err, fs.ErrNotExist) {
		// ELOOP on Linux and macOS, EMLINK on FreeBSD: ask what is there.
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, errLink
		}
	}
	return f, err
}
