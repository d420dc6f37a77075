package audit_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session/audit"
)

// openTemp opens a new log, audit.jsonl in a folder of the test's own, closed
// when the test ends if the test has not closed it; it returns the log and its
// path.
func openTemp(tb testing.TB) (*audit.Log, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "audit.jsonl")
	a, err := audit.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { a.Close() })
	return a, path
}

// closedBytes closes the log a and returns the bytes of its file, path.
func closedBytes(t *testing.T, a *audit.Log, path string) []byte {
	t.Helper()
	a.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeLog(t *testing.T, n int) (string, []byte) {
	t.Helper()
	a, path := openTemp(t)
	for i := range n {
		err := a.Append(audit.Record{Kind: "decision", CallID: fmt.Sprint("c", i), Context: "you", Server: "notes", Tool: "create_note",
			Tier: "write", Decision: "allow", DecidedBy: "user", ArgsSHA256: "ab", Args: json.RawMessage(`{"title":"<b>&é"}`)})
		if err != nil {
			t.Fatal(err)
		}
	}
	b := closedBytes(t, a, path)
	return path, b
}

func verifyBytes(t *testing.T, b []byte) error {
	t.Helper()
	_, err := audit.Verify(bytes.NewReader(b))
	return err
}

func TestAuditChainVerifies(t *testing.T) {
	path, b := writeLog(t, 5)
	n, err := audit.VerifyFile(path)
	if err != nil || n != 5 {
		t.Fatalf("verify = %d, %v", n, err)
	}
	// Reopening continues the chain.
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Append(audit.Record{Kind: "outcome", Outcome: "ok", Args: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if n, err := audit.VerifyFile(path); err != nil || n != 6 {
		t.Fatalf("after reopen: verify = %d, %v", n, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("audit log mode %v, want 0600", st.Mode().Perm())
	}
	_ = b
}

// Hostile case 39: any single bit flipped, a line removed, two lines swapped, the tail cut.
func TestAuditVerifyCatchesEveryTamper(t *testing.T) {
	path, orig := writeLog(t, 3)
	for i := range orig {
		for bit := range 8 {
			b := bytes.Clone(orig)
			b[i] ^= 1 << bit
			if err := verifyBytes(t, b); err == nil {
				t.Fatalf("flipping bit %d of byte %d (%q) went unnoticed", bit, i, orig[i])
			}
		}
	}
	lines := bytes.SplitAfter(orig, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty tail after the last newline
	for i := range lines {
		removed := bytes.Join(append(append([][]byte{}, lines[:i]...), lines[i+1:]...), nil)
		if i < len(lines)-1 {
			if err := verifyBytes(t, removed); err == nil {
				t.Errorf("removing line %d went unnoticed", i+1)
			}
		}
		if err := os.WriteFile(path, removed, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := audit.VerifyFile(path); err == nil {
			t.Errorf("removing line %d went unnoticed by the file check", i+1)
		}
	}
	swapped := bytes.Join([][]byte{lines[1], lines[0], lines[2]}, nil)
	if err := verifyBytes(t, swapped); err == nil {
		t.Error("swapping two lines went unnoticed")
	}
	for cut := 1; cut < len(orig); cut++ {
		if err := os.WriteFile(path, orig[:len(orig)-cut], 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := audit.VerifyFile(path); err == nil {
			t.Fatalf("cutting %d bytes off the end went unnoticed", cut)
		}
	}
}

// A record appended without waiting for the disk (a call's outcome) is in the file as
// soon as AppendUnsynced returns, so a crash of airlock loses nothing; the head file,
// no longer replaced on every commit, catches up within the delayed sync, and Close
// writes whatever is still pending. A delayed sync that fires after Close is harmless.
func TestAudit_UnsyncedRecordWrittenAtOnceHeadFollows(t *testing.T) {
	a, path := openTemp(t)
	headSeq := func() int {
		b, err := os.ReadFile(path + ".head")
		if err != nil {
			return 0
		}
		var h struct{ Seq int }
		_ = json.Unmarshal(b, &h)
		return h.Seq
	}
	lines := func() int {
		b, _ := os.ReadFile(path)
		return bytes.Count(bytes.TrimRight(b, "\n"), []byte("\n")) + 1 // the fill past the last is no record
	}
	if err := a.Append(audit.Record{Kind: "decision", Decision: "allow", Args: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := a.AppendUnsynced(audit.Record{Kind: "outcome", Outcome: "ok", Args: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if n := lines(); n != 2 {
		t.Fatalf("after AppendUnsynced returned the file holds %d records, want 2", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for headSeq() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the head file says record %d, want 2 after the delayed sync", headSeq())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := a.AppendUnsynced(audit.Record{Kind: "outcome", Outcome: "ok", Args: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := headSeq(); got != 3 {
		t.Errorf("after Close the head file says record %d, want 3", got)
	}
	time.Sleep(100 * time.Millisecond) // the delayed sync armed before Close fires
	sum, err := audit.VerifyLog(path)
	if err != nil || sum.Records != 3 || sum.HeadMissing {
		t.Errorf("verify: %+v %v", sum, err)
	}
	if err := a.AppendUnsynced(audit.Record{Kind: "outcome"}); !errors.Is(err, audit.ErrBroken) {
		t.Errorf("AppendUnsynced after Close: %v, want ErrAuditBroken", err)
	}
}

// The delayed sync exists for records nobody synced after they were written. When a
// synced Append already carried them (every agent call's decision does), it writes
// the head file and nothing else: an fsync per 50 ms on a busy gateway was pure cost.
func TestAudit_DelayedSyncSkipsFsyncWhenAlreadyCarried(t *testing.T) {
	a, path := openTemp(t)
	waitHead := func(seq int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			b, _ := os.ReadFile(path + ".head")
			var h struct{ Seq int }
			_ = json.Unmarshal(b, &h)
			if h.Seq == seq {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the head file says record %d, want %d", h.Seq, seq)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	rec := audit.Record{Kind: "decision", Decision: "allow", Args: json.RawMessage(`{}`)}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.Append(rec))
	must(a.AppendUnsynced(rec))
	must(a.Append(rec)) // carries the unsynced record to disk
	waitHead(3)
	if n := a.Syncs(); n != 2 {
		t.Errorf("%d fsyncs for two synced appends and a delayed sync with nothing left to sync, want 2", n)
	}
	must(a.AppendUnsynced(rec))
	waitHead(4)
	if n, s := a.Syncs(), a.SyncedSeq(); n != 3 || s != 4 {
		t.Errorf("after an unsynced record's delayed sync: %d fsyncs, synced up to %d; want 3 and 4", n, s)
	}
}
