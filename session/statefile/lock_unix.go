//go:build unix

package statefile

import (
	"os"
	"syscall"
)

// Lock takes an exclusive advisory lock on f, waiting for it: flock(2), which
// every airlock process on the same state dir takes before it changes pins or appends
// to the audit log. The lock belongs to the open file, so it ends with the process.
func Lock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

// Unlock releases Lock's lock.
func Unlock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

// TryLock takes Lock's lock if no other process holds it, without waiting;
// it reports whether it got it.
func TryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch err {
		case nil:
			return true, nil
		case syscall.EWOULDBLOCK:
			return false, nil
		case syscall.EINTR:
			continue
		}
		return false, err
	}
}

// LockShared takes a shared advisory lock on f, waiting for it: any number of
// holders at once, none while Lock's is held. An open audit log holds one on its
// file for as long as it is open, so that the last to close it can tell it is
// the last (TryLock then succeeds).
func LockShared(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH)
		if err != syscall.EINTR {
			return err
		}
	}
}
