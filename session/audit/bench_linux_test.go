package audit_test

import (
	"bytes"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkFloorFdatasyncAppend is a line of a decision record's size appended to
// a file preallocated well past its end (fallocate, its size kept) and synced with
// fdatasync, back to back, on the same file system: each sync commits the file's
// new size too.
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

// BenchmarkFloorFdatasyncFilled is the floor of BenchmarkAppendDecisionSynced: a
// line of a decision record's size written over a file's fill (newlines written
// and synced before) and synced with fdatasync, back to back, on the same file
// system. The file's size never changes and its times are never asked, so a sync
// commits the line's bytes and nothing else.
func BenchmarkFloorFdatasyncFilled(b *testing.B) { floorFilled(b, 1) }

// BenchmarkFloorFdatasyncFilledCall is the floor of BenchmarkAppendCallRecords: a
// call's two records' bytes (the outcome, then the next decision) written inside the
// file's size, one fdatasync for both.
func BenchmarkFloorFdatasyncFilledCall(b *testing.B) { floorFilled(b, 2) }

// floorFilled writes records lines of a decision record's size inside a file's
// size, over bytes written and synced before, then fdatasyncs, back to back.
func floorFilled(b *testing.B, records int) {
	line := bytes.Repeat(benchLine(b), records)
	f, err := os.OpenFile(b.TempDir()+"/floor", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	const step = 2 << 20
	fill := bytes.Repeat([]byte{'\n'}, step)
	var off, filled int64
	for b.Loop() {
		if off+int64(len(line)) > filled {
			if _, err := f.WriteAt(fill, filled); err != nil {
				b.Fatal(err)
			}
			filled += step
			if err := unix.Fdatasync(int(f.Fd())); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := f.WriteAt(line, off); err != nil {
			b.Fatal(err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
		off += int64(len(line))
	}
}
