//go:build unix

package statefile_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session/statefile"
)

// later is a clock Settle and a second past now: what a look a few seconds after
// the file was written sees.
func later() time.Time { return time.Now().Add(statefile.Settle + time.Second) }

func stamp(t *testing.T, path string) statefile.Stamp {
	t.Helper()
	s, err := statefile.StampPath(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStamp_SettledUnchangedFileIsVouchedFor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, []byte("token\n"), 0o600)
	defer statefile.SetClock(later)()
	if a, b := stamp(t, path), stamp(t, path); !a.Unchanged(b) {
		t.Fatal("a settled file nobody touched is not vouched for by its stamp")
	}
}

// A file changed within Settle of the look may change again within the same tick of
// the file system's clock without moving any time: it is never vouched for.
func TestStamp_RecentlyChangedFileIsReadAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, []byte("token\n"), 0o600)
	if a, b := stamp(t, path), stamp(t, path); a.Unchanged(b) {
		t.Fatal("a file written just now is vouched for: a second write in the same tick would go unseen")
	}
	// A clock behind the file's times (stepped back) never lets it settle.
	defer statefile.SetClock(func() time.Time { return time.Now().Add(-time.Hour) })()
	if a, b := stamp(t, path), stamp(t, path); a.Unchanged(b) {
		t.Fatal("a file whose times are ahead of the clock is vouched for")
	}
}

// A rewrite that puts the old modification time back (cp -p, touch -r, a restore)
// leaves the identity, size, mode and modification time as they were: only the
// change time, which no program can set, says the bytes are new.
func TestStamp_RewriteKeepingItsTimesIsAChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, []byte("allow\n"), 0o600)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(path, old, old)
	before, _ := os.Lstat(path)
	defer statefile.SetClock(later)()
	a := stamp(t, path)
	time.Sleep(20 * time.Millisecond) // past a coarse clock's tick, so the change time moves
	if err := os.WriteFile(path, []byte("deny!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, old, old)
	after, _ := os.Lstat(path)
	if !os.SameFile(before, after) || before.Size() != after.Size() || !before.ModTime().Equal(after.ModTime()) || before.Mode() != after.Mode() {
		t.Fatal("premise: the rewrite was meant to keep identity, size, time and mode")
	}
	if a.Unchanged(stamp(t, path)) {
		t.Fatal("a rewrite that kept the file's identity, size, mode and modification time is taken for no change")
	}
}

func TestStamp_ModeLinkAndReplacementAreChanges(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	os.WriteFile(path, []byte("token\n"), 0o600)
	defer statefile.SetClock(later)()
	a := stamp(t, path)
	os.Chmod(path, 0o644)
	if a.Unchanged(stamp(t, path)) {
		t.Error("a file opened to others is taken for no change")
	}
	os.Chmod(path, 0o600)
	a = stamp(t, path)
	other := filepath.Join(dir, "g")
	os.WriteFile(other, []byte("token\n"), 0o600)
	os.Rename(other, path)
	if a.Unchanged(stamp(t, path)) {
		t.Error("another file renamed into place is taken for no change")
	}
	a = stamp(t, path)
	os.Rename(path, other)
	os.Symlink(other, path)
	if a.Unchanged(stamp(t, path)) {
		t.Error("a link to the file put in its place is taken for no change")
	}
	var zero statefile.Stamp
	if zero.Unchanged(stamp(t, path)) {
		t.Error("the zero stamp (nothing read yet) vouches for a file")
	}
}

// What is put at the path in place of the file just written (a FIFO, a file others
// may read) is not held and vouched for as that file.
func TestHoldWritten_RefusesWhatIsNotAPrivateFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(dir, "shared")
	os.WriteFile(shared, []byte("x"), 0o600)
	os.Chmod(shared, 0o644)
	for _, p := range []string{fifo, shared} {
		if _, held, err := statefile.HoldWritten(p); err == nil {
			held.Close()
			t.Errorf("%s: held and vouched for", filepath.Base(p))
		}
	}
	private := filepath.Join(dir, "private")
	os.WriteFile(private, []byte("x"), 0o600)
	s, held, err := statefile.HoldWritten(private)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if !s.Unchanged(stamp(t, private)) {
		t.Error("the file just written and held is not vouched for at once")
	}
}
