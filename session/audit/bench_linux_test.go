package audit_test

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkFloorFdatasyncAppend is the floor of BenchmarkAppendDecisionSynced: a
// line of a decision record's size appended to a file preallocated well past its
// end and synced with fdatasync, back to back, on the same file system.
func BenchmarkFloorFdatasyncAppend(b *testing.B) {
	const ahead = 8 << 20
	var allocated int64
	benchFloor(b, func(f *os.File, off int64) error {
		if off+ahead/2 > allocated {
			if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, off, ahead); err != nil {
				return err
			}
			allocated = off + ahead
		}
		return unix.Fdatasync(int(f.Fd()))
	})
}
