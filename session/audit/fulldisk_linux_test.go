//go:build linux

package audit_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/fulldisk"
	"github.com/airlock-mcp/airlock/session/audit"
)

// A seal that fails on a full disk must not leave a state that airlock takes for
// a new, empty log: that log would verify "chain intact" from record 1 and never
// name the log it replaced. It fails with nothing moved; once there is space, it
// seals.
func TestSeal_FullDiskLeavesTheDamagedLogInPlace(t *testing.T) {
	a, dir, path := openOnTmpfs(t, "256k")
	for i := range 5 {
		if err := a.Append(rec(i)); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	b, _ := os.ReadFile(path)
	write(t, path, b[:len(b)-10]) // cut: damaged
	filler := fulldisk.Fill(t, dir)
	if _, err := audit.Seal(path); err == nil {
		t.Fatal("seal on a full disk succeeded")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("after a failed seal the log is gone from its place: %v", err)
	}
	// Room for a record, as when a few bytes come free.
	os.Truncate(filler, 0)
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Append(rec(9)); err == nil || !a.Damaged() {
		t.Errorf("after a failed seal: append %v; want the log still refused as damaged", err)
	}
	a.Close()
	s, err := audit.Seal(path)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := audit.VerifyLog(path)
	if err != nil || sum.Sealed == nil || sum.Sealed.File != filepath.Base(s.MovedTo) {
		t.Errorf("the sealed log: %+v %v", sum, err)
	}
}

// A full disk when a segment is full: the records are refused, nothing cut is
// left, and once there is space the next append closes the segment and goes on;
// the log verifies as one chain.
func TestRotation_FullDiskThenRecovers(t *testing.T) {
	a, dir, path := openOnTmpfs(t, "256k")
	a.SetSegmentBytes(2048)
	n := 0
	for ; n < 8; n++ {
		if err := a.Append(rec(n)); err != nil {
			t.Fatal(err)
		}
	}
	n = appendUntilFull(t, a, dir, n, 200, rec)
	for range 20 {
		if err := a.Append(rec(n)); err != nil {
			t.Fatalf("after space came back: %v", err)
		}
		n++
	}
	a.Close()
	sum, err := audit.VerifyLog(path)
	if err != nil || sum.Files < 2 {
		t.Errorf("after a full disk across a rotation: %+v %v", sum, err)
	}
}

// A disk that fills after the log's fill was written: the records go on into the
// fill, each synced, so the calls whose decisions are on disk still run; once it is
// used up the next record is refused as on any full disk, nothing cut is left, and
// once there is space the log goes on. It verifies as one chain.
func TestLog_FullDiskAfterTheFillUsesItThenRefuses(t *testing.T) {
	a, dir, path := openOnTmpfs(t, "8m")
	if err := a.Append(benchRecord(0)); err != nil {
		t.Fatal(err)
	}
	waitFilled(t, path)
	n := appendUntilFull(t, a, dir, 1, 20000, benchRecord)
	if n < 1000 {
		t.Errorf("on a disk full after the log's fill was written, %d records went in; want the fill's worth", n-1)
	}
	if err := a.Append(benchRecord(n)); err != nil {
		t.Fatalf("after space came back: %v", err)
	}
	a.Close()
	sum, err := audit.VerifyLog(path)
	if err != nil || sum.Records != n+1 {
		t.Errorf("after a full disk with the fill: %+v %v; want %d records", sum, err, n+1)
	}
}

// openOnTmpfs opens a new log, audit.jsonl on a tmpfs of size of the test's own
// (fulldisk.Mount), closed when the test ends if the test has not closed it; it
// returns the log, its folder and its path.
func openOnTmpfs(t *testing.T, size string) (*audit.Log, string, string) {
	t.Helper()
	dir := fulldisk.Mount(t, size)
	path := filepath.Join(dir, "audit.jsonl")
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, dir, path
}

// appendUntilFull fills dir's disk, then appends rec(n), rec(n+1), … until one is
// refused, trying at most max; it fails the test unless the refusal is the full
// disk's and left the log undamaged, then gives the space back. It returns the
// number of the refused record.
func appendUntilFull(t *testing.T, a *audit.Log, dir string, n, max int, rec func(int) audit.Record) int {
	t.Helper()
	filler := fulldisk.Fill(t, dir)
	var failed error
	for range max {
		if failed = a.Append(rec(n)); failed != nil {
			break
		}
		n++
	}
	if !errors.Is(failed, audit.ErrBroken) || !strings.Contains(failed.Error(), "no space left") {
		t.Fatalf("appending on a full disk: %v", failed)
	}
	if a.Damaged() {
		t.Fatalf("a full disk damaged the log: %v", a.Problem())
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	return n
}

// A disk with less room than the fill takes none of it: the log is its records
// alone, takes none of the space the disk has left, and appends grow it as they
// would without the fill.
func TestLog_DiskTooSmallForTheFillTakesNone(t *testing.T) {
	a, _, path := openOnTmpfs(t, "256k")
	for i := range 10 {
		if err := a.Append(rec(i)); err != nil {
			t.Fatal(err)
		}
	}
	if got, end := fileSize(t, path), recordsEnd(t, path); got != end {
		t.Errorf("on a disk too small for the fill the log is %d bytes, its records %d; want no fill", got, end)
	}
}
