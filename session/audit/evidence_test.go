package audit_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/airlock-mcp/airlock/session/audit"
)

func rec(i int) audit.Record {
	return audit.Record{Kind: "decision", CallID: fmt.Sprint("c", i), Server: "notes", Tool: "create_note", Decision: "allow", Args: json.RawMessage(`{"n":1}`)}
}

// Opening a log reads its tail under the lock every writer takes: with another
// log appending large records all the while, no open ever sees half a record.
func TestOpen_ReadsTheTailUnderTheLock(t *testing.T) {
	w, path := openTemp(t)
	big := audit.Record{Kind: "decision", Args: json.RawMessage(`{"q":"` + strings.Repeat("x", 256<<10) + `"}`)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			if err := w.AppendUnsynced(big); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	bad, opens := 0, 0
	for running := true; running; opens++ {
		select {
		case <-done:
			running = false
		default:
		}
		r, err := audit.Open(path)
		if err != nil {
			bad++
			if bad < 3 {
				t.Errorf("open %d while another log appends: %v", opens, err)
			}
			continue
		}
		if p := r.Problem(); p != nil {
			bad++
			if bad < 3 {
				t.Errorf("open %d while another log appends: %v", opens, p)
			}
		}
		r.Close()
	}
	if bad > 0 {
		t.Errorf("%d of %d opens saw a damaged log", bad, opens)
	}
}

// Segments: a log past its size limit goes on in a new file whose first record
// names the one before and its last record; verify reads them all as one chain,
// several writers included; a change to an old segment, a missing segment or a cut
// one fails it.
func TestRotation_SegmentsVerifyAsOneChain(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	const writers, each = 3, 60
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := audit.Open(path)
			if err != nil {
				t.Error(err)
				return
			}
			defer a.Close()
			a.SetSegmentBytes(4096)
			for i := range each {
				if err := a.Append(rec(w*each + i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	sum, err := audit.VerifyLog(path)
	segs, _ := filepath.Glob(path + ".0*")
	if err != nil || sum.Records < writers*each || sum.Files < 3 || sum.Files != len(segs)+1 {
		t.Fatalf("verify across segments: %+v %v (%d segments)", sum, err, len(segs))
	}
	// Reopening goes on from the newest segment.
	a, err := audit.Open(path)
	if err != nil || a.Problem() != nil {
		t.Fatal(err, a.Problem())
	}
	if err := a.Append(rec(0)); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if s, err := audit.VerifyLog(path); err != nil || s.Records != sum.Records+1 {
		t.Fatalf("after reopening: %+v %v", s, err)
	}
	first, _ := os.ReadFile(segs[1])
	line, _, _ := bytes.Cut(first, []byte("\n"))
	var r audit.Record
	if err := json.Unmarshal(line, &r); err != nil || r.Kind != "segment" || r.Previous == nil || r.Previous.File != filepath.Base(segs[0]) {
		t.Errorf("the second segment's first record does not name the first: %s", line)
	}

	old, _ := os.ReadFile(segs[0])
	tampered := bytes.Clone(old)
	tampered[len(tampered)/2] ^= 1
	if err := os.WriteFile(segs[0], tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := audit.VerifyLog(path); err == nil || !strings.Contains(err.Error(), filepath.Base(segs[0])) {
		t.Errorf("a tampered old segment: %v, want a failure naming %s", err, filepath.Base(segs[0]))
	}
	// Its last record cut: the next segment no longer joins it.
	lines := bytes.SplitAfter(old, []byte("\n"))
	if err := os.WriteFile(segs[0], bytes.Join(lines[:len(lines)-2], nil), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := audit.VerifyLog(path); err == nil {
		t.Error("an old segment cut by one record went unnoticed")
	}
	if err := os.WriteFile(segs[0], old, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(segs[1], segs[1]+".away"); err != nil {
		t.Fatal(err)
	}
	if _, err := audit.VerifyLog(path); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing segment: %v", err)
	}
	if err := os.Rename(segs[1]+".away", segs[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := audit.VerifyLog(path); err != nil {
		t.Errorf("restored: %v", err)
	}
}

// What Open refuses to append to, and what it only reports.
func TestOpen_DamageRefusedNoticeReported(t *testing.T) {
	for _, tc := range []struct {
		name    string
		damage  func(t *testing.T, path string, lines [][]byte)
		refused string // "" when the log is only reported
		notice  string
	}{
		{name: "cut to 2 of 5", refused: "3 records removed from the end", damage: func(t *testing.T, path string, lines [][]byte) {
			write(t, path, bytes.Join(lines[:2], nil))
		}},
		{name: "cut inside the last record", refused: "cut short", damage: func(t *testing.T, path string, lines [][]byte) {
			b := bytes.Join(lines, nil)
			write(t, path, b[:len(b)-7])
		}},
		{name: "last record changed", refused: "last record is damaged", damage: func(t *testing.T, path string, lines [][]byte) {
			lines[4] = bytes.Replace(lines[4], []byte(`"c4"`), []byte(`"c9"`), 1)
			write(t, path, bytes.Join(lines, nil))
		}},
		{name: "head garbled", refused: "not a head record", damage: func(t *testing.T, path string, lines [][]byte) {
			write(t, path+".head", []byte("{garbled"))
		}},
		{name: "head missing", refused: "head file", damage: func(t *testing.T, path string, lines [][]byte) {
			os.Remove(path + ".head")
		}},
		{name: "head a link", refused: "symbolic link", damage: func(t *testing.T, path string, lines [][]byte) {
			os.Rename(path+".head", path+".head.real")
			os.Symlink(path+".head.real", path+".head")
		}},
		{name: "a middle record changed", notice: "record", damage: func(t *testing.T, path string, lines [][]byte) {
			lines[2] = bytes.Replace(lines[2], []byte(`"c2"`), []byte(`"c7"`), 1)
			write(t, path, bytes.Join(lines, nil))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, orig := writeLog(t, 5)
			tc.damage(t, path, bytes.SplitAfter(orig, []byte("\n"))[:5])
			before, _ := os.ReadFile(path)
			head, _ := os.ReadFile(path + ".head")
			a, err := audit.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			err = a.Append(rec(9))
			if tc.refused != "" {
				if !errors.Is(err, audit.ErrBroken) || !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), "airlock audit seal --start-new") {
					t.Errorf("append: %v; want a refusal saying %q and what to do", err, tc.refused)
				}
				if !a.Damaged() || !strings.Contains(a.Problem().Error(), tc.refused) {
					t.Errorf("problem: %v", a.Problem())
				}
				a.Close()
				if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
					t.Error("the damaged log was changed")
				}
				if h, _ := os.ReadFile(path + ".head"); !bytes.Equal(h, head) {
					t.Errorf("the head was rewritten: %s -> %s", head, h)
				}
				return
			}
			if err != nil {
				t.Errorf("append to a log with a damaged middle record: %v", err)
			}
			if p := a.Problem(); p == nil || a.Damaged() || !strings.Contains(p.Error(), tc.notice) {
				t.Errorf("problem: %v, want a notice", p)
			}
		})
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// recordsIn2KSegments writes n records to a new log whose segments close at 2048
// bytes, closes it, and returns its path.
func recordsIn2KSegments(t *testing.T, n int) string {
	t.Helper()
	a, path := openTemp(t)
	a.SetSegmentBytes(2048)
	for i := range n {
		if err := a.Append(rec(i)); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	return path
}

// Seal moves a damaged log aside, whole, and starts a new one naming it; a log that
// had segments keeps them under the sealed name, and still fails verify as before.
func TestSeal_StartsANewLogNamingTheOld(t *testing.T) {
	path := recordsIn2KSegments(t, 30)
	b, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(b, []byte("\n"))
	write(t, path, bytes.Join(lines[:1], nil))
	// A running log sees the damage...
	running, err := audit.Open(path)
	if err != nil || !running.Damaged() {
		t.Fatalf("open of the cut log: %v %v", err, running.Problem())
	}
	defer running.Close()
	s, err := audit.Seal(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Problem == nil || !strings.Contains(s.Problem.Error(), "removed from the end") {
		t.Errorf("seal's verify: %v", s.Problem)
	}
	if _, err := audit.VerifyLog(s.MovedTo); err == nil || !strings.Contains(err.Error(), "removed from the end") {
		t.Errorf("the sealed log no longer shows its damage: %v", err)
	}
	if segs, _ := filepath.Glob(s.MovedTo + ".0*"); len(segs) == 0 {
		t.Error("the segments were not moved with the log")
	}
	sum, err := audit.VerifyLog(path)
	if err != nil || sum.Records != 1 || sum.Sealed == nil || sum.Sealed.File != filepath.Base(s.MovedTo) {
		t.Fatalf("the new log: %+v %v", sum, err)
	}
	// ...and the running one goes on in the new log at its next record.
	if err := running.Append(rec(99)); err != nil {
		t.Errorf("append after the seal: %v", err)
	}
	if running.Problem() != nil {
		t.Errorf("problem after the seal: %v", running.Problem())
	}
	running.Close()
	if sum, err := audit.VerifyLog(path); err != nil || sum.Records != 2 {
		t.Errorf("after the seal and one record: %+v %v", sum, err)
	}
}

// A crash between closing a segment and the new file's first record leaves no
// current file (or an empty one): the next open goes on from the newest segment,
// and the first record it writes names that segment.
func TestRotation_CrashBetweenRenameAndFirstRecord(t *testing.T) {
	path := recordsIn2KSegments(t, 20)
	segs, _ := filepath.Glob(path + ".0*")
	if err := os.Rename(path, fmt.Sprintf("%s.%06d", path, len(segs)+1)); err != nil {
		t.Fatal(err)
	}
	a, err := audit.Open(path)
	if err != nil || a.Problem() != nil {
		t.Fatalf("open after the crash: %v %v", err, a.Problem())
	}
	if err := a.Append(rec(99)); err != nil {
		t.Fatal(err)
	}
	a.Close()
	sum, err := audit.VerifyLog(path)
	if err != nil || sum.Records != 22+len(segs) || sum.Files != len(segs)+2 {
		t.Errorf("verify: %+v %v", sum, err)
	}
	// Every byte of the joining record matters (one bit each: every bit of a
	// record is TestAuditVerifyCatchesEveryTamper's).
	b, _ := os.ReadFile(path)
	for i := range bytes.IndexByte(b, '\n') {
		c := bytes.Clone(b)
		c[i] ^= 1 << (i % 7)
		write(t, path, c)
		if _, err := audit.VerifyLog(path); err == nil {
			t.Fatalf("flipping bit %d of byte %d (%q) of a segment's first record went unnoticed", i%7, i, b[i])
		}
	}
}

// A link put in the log's place while airlock runs is refused at the next record,
// never followed, and the refusal is the log's problem.
func TestAppend_LinkInTheLogsPlaceIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Append(rec(0)); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "elsewhere")
	write(t, other, nil)
	if err := os.Rename(path, path+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, path); err != nil {
		t.Fatal(err)
	}
	err = a.Append(rec(1))
	if !errors.Is(err, audit.ErrBroken) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("append with a link in the log's place: %v", err)
	}
	if p := a.Problem(); p == nil || !strings.Contains(p.Error(), "symbolic link") {
		t.Errorf("problem: %v", p)
	}
	if b, _ := os.ReadFile(other); len(b) != 0 {
		t.Errorf("the link was followed: %q", b)
	}
}
