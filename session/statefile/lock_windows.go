//go:build windows

package statefile

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockOffsetHigh places the locked byte the lock covers: one byte far beyond any data, so the
// lock never blocks reading or writing the file itself (Windows locks are mandatory).
const lockOffsetHigh = 0x7fffffff

// Lock takes an exclusive lock on f, waiting for it (LockFileEx), which every
// airlock process on the same state dir takes before it changes pins or appends to
// the audit log. The lock ends with the handle.
func Lock(f *os.File) error {
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol)
}

// Unlock releases Lock's lock.
func Unlock(f *os.File) error {
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}

// TryLock takes Lock's lock if no other process holds it, without waiting;
// it reports whether it got it.
func TryLock(f *os.File) (bool, error) {
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err == windows.ERROR_LOCK_VIOLATION {
		return false, nil
	}
	return err == nil, err
}

// LockShared takes a shared lock on f, waiting for it (LockFileEx without
// LOCKFILE_EXCLUSIVE_LOCK): any number of holders at once, none while Lock's is
// held. The lock ends with the handle.
func LockShared(f *os.File) error {
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.LockFileEx(windows.Handle(f.Fd()), 0, 0, 1, 0, ol)
}
