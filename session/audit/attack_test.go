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
	"time"

	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/statefile"
)

// The log cut at every byte of its last two records: a cut inside a record (what
// a power loss leaves, or an attacker) and a cut between records (whole records
// removed) are both refused, with the head as it was, and nothing is written to
// the damaged files. With a head that lags (a crash before the delayed sync wrote
// it), a cut between records after the head's record is accepted: those records
// were never vouched for, as docs/audit-durability.md says.
func TestOpen_CutAtEveryByteOfTheLastTwoRecords(t *testing.T) {
	path, orig := writeLog(t, 5)
	head, err := os.ReadFile(path + ".head")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(orig, []byte("\n"))[:5]
	from := len(orig) - len(lines[4]) - len(lines[3])
	var third audit.Record
	if err := json.Unmarshal(lines[2], &third); err != nil {
		t.Fatal(err)
	}
	lagging := fmt.Appendf(nil, `{"seq":3,"hash":%q}`, third.Hash)
	for _, h := range []struct {
		name string
		head []byte
	}{{"head at the end", head}, {"head lagging at record 3", lagging}} {
		for cut := from; cut < len(orig); cut++ {
			write(t, path, orig[:cut])
			write(t, path+".head", h.head)
			boundary := orig[cut-1] == '\n'
			a, err := audit.Open(path)
			if err != nil {
				t.Fatalf("%s, cut at %d: open: %v", h.name, cut, err)
			}
			appendErr := a.Append(rec(9))
			a.Close()
			after, _ := os.ReadFile(path)
			if boundary && h.head[len(`{"seq":`)] == '3' {
				if appendErr != nil {
					t.Errorf("%s, cut at %d (after record 3 or 4): %v; want the lag accepted", h.name, cut, appendErr)
				}
				continue
			}
			if !errors.Is(appendErr, audit.ErrBroken) || !a.Damaged() {
				t.Fatalf("%s, cut at %d of %d: append %v, damaged %v; want a refusal", h.name, cut, len(orig), appendErr, a.Damaged())
			}
			want := "cut short"
			if boundary {
				want = "removed from the end"
			}
			if !strings.Contains(appendErr.Error(), want) {
				t.Errorf("%s, cut at %d: %v; want it to say %q", h.name, cut, appendErr, want)
			}
			if !bytes.Equal(after, orig[:cut]) {
				t.Fatalf("%s, cut at %d: the damaged log was written to", h.name, cut)
			}
			if _, err := audit.VerifyLog(path); err == nil {
				t.Fatalf("%s, cut at %d: verify passed", h.name, cut)
			}
		}
	}
}

// The lock file removed, or replaced, while an airlock runs: another airlock that
// starts then must still take the same lock as the first, or the two would seal
// records onto the same tail and fork the chain.
func TestLock_ReplacedLockFileStillExcludes(t *testing.T) {
	first, path := openTemp(t)
	if err := first.Append(rec(0)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path + ".lock"); err != nil {
		t.Fatal(err)
	}
	second, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	var wg sync.WaitGroup
	for _, a := range []*audit.Log{first, second} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				if err := a.AppendUnsynced(rec(i)); err != nil {
					t.Errorf("append %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	first.Close()
	second.Close()
	if sum, err := audit.VerifyLog(path); err != nil || sum.Records != 601 {
		t.Errorf("two airlocks after the lock file was replaced: %+v %v; want 601 records, one chain", sum, err)
	}
}

// A lock file that is a link or a folder is refused, never followed, by every way
// in: Open, Seal and verify.
func TestLock_LinkOrFolderRefused(t *testing.T) {
	for _, kind := range []string{"link", "folder"} {
		t.Run(kind, func(t *testing.T) {
			path, _ := writeLog(t, 2)
			os.Remove(path + ".lock")
			other := filepath.Join(filepath.Dir(path), "elsewhere")
			write(t, other, nil)
			if kind == "link" {
				if err := os.Symlink(other, path+".lock"); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Mkdir(path+".lock", 0o700); err != nil {
				t.Fatal(err)
			}
			if a, err := audit.Open(path); err == nil {
				a.Close()
				t.Error("open with a " + kind + " for the lock file succeeded")
			}
			if _, err := audit.Seal(path); err == nil {
				t.Error("seal with a " + kind + " for the lock file succeeded")
			}
			if _, err := audit.VerifyLog(path); err == nil {
				t.Error("verify with a " + kind + " for the lock file succeeded")
			}
			if b, _ := os.ReadFile(path); bytes.Count(b, []byte("\n")) != 2 {
				t.Error("the log was changed")
			}
		})
	}
}

// After a rotation, the new current file emptied (or removed) by someone: the
// head names a record past the newest segment's end, so the log is refused, not
// continued from the segment as after a crash between the rename and the first
// record.
func TestOpen_CurrentFileEmptiedAfterRotation(t *testing.T) {
	for _, how := range []string{"emptied", "removed"} {
		t.Run(how, func(t *testing.T) {
			path, segs := segmentedLog(t, 2)
			b, _ := os.ReadFile(path)
			if bytes.Count(b, []byte("\n")) < 2 {
				t.Fatalf("the current file holds %q, want a segment record and one more", b)
			}
			if how == "emptied" {
				write(t, path, nil)
			} else {
				os.Remove(path)
			}
			a, err := audit.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if err := a.Append(rec(9)); !errors.Is(err, audit.ErrBroken) || !strings.Contains(err.Error(), "removed from the end") {
				t.Errorf("append after the current file was %s (%d segments): %v; want a refusal", how, len(segs), err)
			}
			verifyFails(t, path, "the current file "+how, "removed from the end")
		})
	}
}

// Open reads the tail under the lock every writer holds while it writes: with the
// lock held and half a record in the file, as another process leaves it mid-write,
// Open waits, and once the record is whole it finds the log sound. (Without the
// lock it would call the log cut short and refuse every call.)
func TestOpen_WaitsForTheWriterMidRecord(t *testing.T) {
	path, _ := writeLog(t, 2)
	lf, err := os.OpenFile(path+".lock", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	// The next record, as a writer seals it onto the chain's end; the test then
	// takes it out and writes it again itself, in two halves.
	w, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(rec(2)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	whole, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(whole, []byte("\n"))
	last := lines[len(lines)-2]
	write(t, path, whole[:len(whole)-len(last)])
	if err := statefile.Lock(lf); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Write(last[:len(last)/2])
	done := make(chan *audit.Log, 1)
	go func() {
		r, err := audit.Open(path)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	select {
	case r := <-done:
		if r != nil {
			r.Close()
			t.Fatalf("Open returned while a writer held the lock mid-record: %v", r.Problem())
		}
	case <-time.After(300 * time.Millisecond):
	}
	f.Write(last[len(last)/2:])
	statefile.Unlock(lf)
	r := <-done
	if r == nil {
		return
	}
	defer r.Close()
	if p := r.Problem(); p != nil {
		t.Errorf("after the writer finished: %v", p)
	}
}
