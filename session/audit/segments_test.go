package audit_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session/audit"
)

// segmentedLog writes a log of at least n closed segments and returns its path and
// the segments' names, oldest first.
func segmentedLog(t *testing.T, n int) (string, []string) {
	t.Helper()
	a, path := openTemp(t)
	a.SetSegmentBytes(1024)
	for i := 0; ; i++ {
		if err := a.Append(rec(i)); err != nil {
			t.Fatal(err)
		}
		if segs, _ := filepath.Glob(path + ".0*"); len(segs) >= n {
			break
		}
	}
	if err := a.Append(rec(-1)); err != nil {
		t.Fatal(err)
	}
	a.Close()
	segs, _ := filepath.Glob(path + ".0*")
	if _, err := audit.VerifyLog(path); err != nil {
		t.Fatal(err)
	}
	return path, segs
}

// verifyFails runs VerifyLog and wants a failure that names want, within seconds
// (a FIFO must not hang it).
func verifyFails(t *testing.T, path, what, want string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := audit.VerifyLog(path); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: verify %v; want a failure naming %q", what, err, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: verify hangs", what)
	}
}

// Ten segments: one bit flipped anywhere in the oldest, a middle segment removed,
// renamed past the end, swapped with its neighbour, or replaced by a link, a FIFO
// or a folder: verify fails and names the file, and never hangs.
func TestVerify_TamperedSegments(t *testing.T) {
	path, segs := segmentedLog(t, 10)
	oldest, _ := os.ReadFile(segs[0])
	for i := range oldest {
		b := bytes.Clone(oldest)
		b[i] ^= 1 << (i % 8)
		write(t, segs[0], b)
		if _, err := audit.VerifyLog(path); err == nil || !strings.Contains(err.Error(), filepath.Base(segs[0])) {
			t.Fatalf("bit %d of byte %d of the oldest of %d segments flipped: verify %v", i%8, i, len(segs), err)
		}
	}
	write(t, segs[0], oldest)

	mid := segs[4]
	keep, _ := os.ReadFile(mid)
	restore := func() {
		os.RemoveAll(mid)
		write(t, mid, keep)
		if _, err := audit.VerifyLog(path); err != nil {
			t.Fatalf("restored: %v", err)
		}
	}
	os.Remove(mid)
	verifyFails(t, path, "a middle segment removed", "missing")
	restore()
	os.Rename(mid, fmt.Sprintf("%s.%06d", path, len(segs)+5))
	verifyFails(t, path, "a middle segment renamed past the end", "missing")
	os.Remove(fmt.Sprintf("%s.%06d", path, len(segs)+5))
	restore()
	next, _ := os.ReadFile(segs[5])
	write(t, mid, next)
	write(t, segs[5], keep)
	verifyFails(t, path, "two segments swapped", filepath.Base(mid))
	write(t, segs[5], next)
	restore()
	other := filepath.Join(filepath.Dir(path), "elsewhere")
	write(t, other, keep)
	os.Remove(mid)
	os.Symlink(other, mid)
	verifyFails(t, path, "a segment replaced by a link", "symbolic link")
	restore()
	os.Remove(mid)
	if err := mkfifo(mid); err != nil {
		t.Fatal(err)
	}
	verifyFails(t, path, "a segment replaced by a FIFO", filepath.Base(mid))
	restore()
	os.Remove(mid)
	os.Mkdir(mid, 0o700)
	verifyFails(t, path, "a segment replaced by a folder", filepath.Base(mid))
	restore()
}

// Every segment removed, and the oldest ones removed with the rest renamed down
// to begin at .000001: verify fails (the chain does not start at record 1).
func TestVerify_OldSegmentsRemoved(t *testing.T) {
	path, segs := segmentedLog(t, 4)
	dir := t.TempDir()
	for _, s := range segs {
		os.Rename(s, filepath.Join(dir, filepath.Base(s)))
	}
	verifyFails(t, path, "every segment removed", "missing")
	for i, s := range segs[1:] {
		os.Rename(filepath.Join(dir, filepath.Base(s)), segs[i])
	}
	verifyFails(t, path, "the oldest removed, the rest renumbered", "missing")
}

// Seal run twice while another airlock appends all the while: every record the
// writer was told is written is in one of the three logs, each log verifies, and
// each new log names the one it replaced.
func TestSeal_TwiceWhileAnotherAppends(t *testing.T) {
	w, path := openTemp(t)
	w.SetSegmentBytes(4096)
	written := make(chan int)
	stop := make(chan struct{})
	go func() {
		n := 0
		defer func() { written <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := w.Append(rec(n)); err != nil {
				t.Errorf("append %d beside a seal: %v", n, err)
				return
			}
			n++
		}
	}()
	var moved []string
	for range 2 {
		time.Sleep(30 * time.Millisecond)
		s, err := audit.Seal(path)
		if err != nil {
			t.Fatal(err)
		}
		moved = append(moved, s.MovedTo)
	}
	time.Sleep(30 * time.Millisecond)
	close(stop)
	n := <-written
	w.Close()
	total := 0
	for i, p := range append(moved, path) {
		sum, err := audit.VerifyLog(p)
		if err != nil {
			t.Errorf("log %d (%s): %v", i, filepath.Base(p), err)
		}
		records := sum.Records
		if i > 0 {
			records-- // the seal's own record
			if sum.Sealed == nil || sum.Sealed.File != filepath.Base(moved[i-1]) {
				t.Errorf("log %d does not name the log it replaced: %+v", i, sum.Sealed)
			}
		}
		segs, _ := filepath.Glob(p + ".0*")
		records -= len(segs) // each segment's first record
		total += records
	}
	if total != n {
		t.Errorf("the writer was told %d records were written; the three logs hold %d", n, total)
	}
}

// rechain reseals lines (each without its newline) as one chain after prev,
// changing the first with mutate: what someone who rewrites records and
// recomputes every hash after them makes.
func rechain(t *testing.T, lines [][]byte, prev string, mutate func(string) string) [][]byte {
	t.Helper()
	var out [][]byte
	for i, l := range lines {
		var r audit.Record
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		m := func(s string) string {
			s = strings.Replace(s, `"prev":"`+r.Prev+`"`, `"prev":"`+prev+`"`, 1)
			if i == 0 {
				s = mutate(s)
			}
			return s
		}
		nl := reseal(t, l, prev, m)
		if err := json.Unmarshal(nl, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, nl)
		prev = r.Hash
	}
	return out
}

// A later file whose first record is not a segment record naming the file before
// it does not join, even with every hash after it recomputed; nor does a log whose
// first file begins past record 1 (Open says so as a notice, verify fails).
func TestVerify_FilesJoinOnlyThroughASegmentRecord(t *testing.T) {
	path, segs := segmentedLog(t, 2)
	b, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	var first audit.Record
	json.Unmarshal(lines[0], &first)
	for _, tc := range []struct{ name, from, to string }{
		{"not a segment record", `"kind":"segment"`, `"kind":"decision"`},
		{"naming another file", `"file":"` + filepath.Base(segs[len(segs)-1]) + `"`, `"file":"elsewhere.000009"`},
	} {
		re := rechain(t, lines, first.Prev, func(s string) string { return strings.Replace(s, tc.from, tc.to, 1) })
		write(t, path, append(bytes.Join(re, []byte("\n")), '\n'))
		os.Remove(path + ".head")
		verifyFails(t, path, tc.name, "not the start of a segment")
	}

	path, orig := writeLog(t, 5)
	ls := bytes.SplitAfter(orig, []byte("\n"))
	write(t, path, bytes.Join(ls[2:], nil))
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if p := a.Problem(); p == nil || a.Damaged() || !strings.Contains(p.Error(), "begins at record 3") {
		t.Errorf("open of a log whose first records were removed: %v; want a notice", p)
	}
	verifyFails(t, path, "the first records removed", "starts at record 3")
}
