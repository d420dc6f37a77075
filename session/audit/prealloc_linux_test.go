package audit_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/airlock-mcp/airlock/session/audit"
	"golang.org/x/sys/unix"
)

// beyondSize is how many bytes of blocks the file at path holds past its size
// rounded up to its file system's block.
func beyondSize(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	bs := int64(st.Blksize)
	return st.Blocks*512 - (st.Size+bs-1)/bs*bs
}

// skipWithoutFallocate skips when dir's file system cannot preallocate.
func skipWithoutFallocate(t *testing.T, dir string) {
	t.Helper()
	f, err := os.CreateTemp(dir, "probe")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, 4096); errors.Is(err, unix.EOPNOTSUPP) {
		t.Skipf("the file system of %s cannot preallocate: %v", dir, err)
	}
}

// The log's file keeps at least a MiB allocated past its end while it is open, so
// that a synced append writes into blocks it already has, and its size stays its
// last record's end; a closed log, and a closed segment, keep nothing past it.
func TestLog_PreallocatesPastItsEndAndReleasesItOnClose(t *testing.T) {
	a, path := openTemp(t)
	skipWithoutFallocate(t, filepath.Dir(path))
	a.SetSegmentBytes(4 << 10)
	if err := a.Append(rec(0)); err != nil {
		t.Fatal(err)
	}
	if got := beyondSize(t, path); got < 1<<20 {
		t.Errorf("after an append the log holds %d bytes past its end; want at least 1 MiB preallocated", got)
	}
	n := 1
	for ; !segmentClosed(path); n++ {
		if err := a.Append(rec(n)); err != nil {
			t.Fatal(err)
		}
	}
	if got := beyondSize(t, path+".000001"); got > 0 {
		t.Errorf("the closed segment holds %d bytes past its end; want none", got)
	}
	if got := beyondSize(t, path); got < 1<<20 {
		t.Errorf("the new segment holds %d bytes past its end; want at least 1 MiB preallocated", got)
	}
	a.Close()
	if got := beyondSize(t, path); got > 0 {
		t.Errorf("the closed log holds %d bytes past its end; want none", got)
	}
	if sum, err := audit.VerifyLog(path); err != nil || sum.Records < n {
		t.Errorf("the log after preallocation: %+v %v; want %d records", sum, err, n)
	}
}

// segmentClosed reports whether the log at path has closed its first segment.
func segmentClosed(path string) bool {
	_, err := os.Lstat(path + ".000001")
	return err == nil
}
