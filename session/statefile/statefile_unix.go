//go:build unix

package statefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow opens path with O_NOFOLLOW (a link at path fails the open, it is
// never followed) and O_NONBLOCK (a FIFO planted at path cannot hang the open).
func openNoFollow(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		// ELOOP on Linux and macOS, EMLINK on FreeBSD: ask what is there.
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &Error{Path: path, Problem: Symlink}
		}
		return nil, err
	}
	return f, nil
}

// check refuses an open file that is not a regular file, is owned by another user,
// or has any group or other permission bit.
func check(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &Error{Path: path, Problem: NotRegular, Detail: fi.Mode().Type().String()}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if uid := os.Getuid(); int(st.Uid) != uid {
			return &Error{Path: path, Problem: OtherOwner, Detail: fmt.Sprintf("uid %d, you are uid %d", st.Uid, uid)}
		}
	} else {
		return errors.New(path + ": cannot tell who owns it")
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return &Error{Path: path, Problem: Shared, Detail: fmt.Sprintf("mode %04o", perm)}
	}
	return nil
}

func privateFix(path string) string { return "run chmod 600 " + path }

// createPrivate creates path exclusively with mode 0600 (whatever the umask), never
// through a link.
func createPrivate(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return f, nil
}
