package audit

import (
	"os"

	"golang.org/x/sys/unix"
)

// preallocate reserves n bytes of blocks of f from off without changing its size
// (fallocate with FALLOC_FL_KEEP_SIZE), so that appends there write into blocks
// the file already has and their sync commits less to the file system's journal.
func preallocate(f *os.File, off, n int64) error {
	return onFd(f, "fallocate", func(fd int) error { return unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, off, n) })
}

// syncFile puts what was written to f on disk, with its size: fdatasync, which
// leaves out only the times, not what reading the records back needs.
func syncFile(f *os.File) error {
	return onFd(f, "fdatasync", unix.Fdatasync)
}

// onFd calls op with f's descriptor, again when a signal interrupted it; an error
// names the call (name) and the file.
func onFd(f *os.File, name string, op func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if opErr = op(int(fd)); opErr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if opErr != nil {
		return &os.PathError{Op: name, Path: f.Name(), Err: opErr}
	}
	return nil
}
