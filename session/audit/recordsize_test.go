package audit_test

import (
	"bytes"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/session/audit"
)

// allocated returns how many bytes f allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Every text field airlock writes into a record is bounded, cut with a marker
// that says so, and arguments too long for a record are replaced by a marker
// (their hash stays): no record is longer than MaxRecordBytes, and each verifies.
func TestRecord_EveryFieldIsBoundedWithAMarker(t *testing.T) {
	a, path := openTemp(t)
	huge := strings.Repeat("\x01é", 200<<10) // escapes to 6 bytes a byte in the line
	r := audit.Record{Kind: "outcome", CallID: huge, Server: huge, Tool: huge, Reason: huge, PersonReason: huge, Error: huge, Rule: huge, Client: huge, Context: huge, Args: json.RawMessage(`{}`)}
	if err := a.Append(r); err != nil {
		t.Fatal(err)
	}
	restore := audit.SetMaxRecordBytes(300 << 10)
	big := audit.Record{Kind: "decision", ArgsSHA256: "abc", Args: json.RawMessage(`{"q":"` + strings.Repeat("x", 400<<10) + `"}`)}
	err := a.Append(big)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	b := closedBytes(t, a, path)
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	if len(lines[0]) > audit.MaxRecordBytes-(audit.MaxArgsBytes) {
		t.Errorf("a record of bounded fields is %d bytes, over the %d its fields may take", len(lines[0]), audit.MaxRecordBytes-audit.MaxArgsBytes)
	}
	var got audit.Record
	if err := json.Unmarshal(lines[0], &got); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"error": got.Error, "reason": got.Reason, "tool": got.Tool, "call_id": got.CallID} {
		if !strings.Contains(s, "[cut by airlock:") {
			t.Errorf("%s of %d bytes was cut without a marker (or not at all): %d bytes", name, len(huge), len(s))
		}
	}
	if len(lines[1]) > 300<<10 {
		t.Errorf("a record with %d bytes of arguments is %d bytes, over the 300 KiB set", 400<<10, len(lines[1]))
	}
	if !bytes.Contains(lines[1], []byte("cut by airlock")) || !bytes.Contains(lines[1], []byte(`"args_sha256":"abc"`)) {
		t.Errorf("arguments too long for a record were not replaced by a marker: %.200s", lines[1])
	}
	if _, err := audit.VerifyLog(path); err != nil {
		t.Errorf("the bounded records do not verify: %v", err)
	}
}

// A line longer than airlock writes is damage named with its offset, found
// without holding it in memory: by verify (no newline, as a cut write leaves) and
// by Open (with a newline, as a pasted line would).
func TestLog_ALineLongerThanAirlockWritesIsDamage(t *testing.T) {
	defer audit.SetMaxRecordBytes(64 << 10)()
	for _, newline := range []bool{false, true} {
		a, path := openTemp(t)
		for i := range 3 {
			if err := a.Append(rec(i)); err != nil {
				t.Fatal(err)
			}
		}
		a.Close()
		st, _ := os.Stat(path)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		long := bytes.Repeat([]byte("x"), 32<<20)
		if newline {
			long = append(long, '\n')
		}
		f.Write(long)
		f.Close()
		long = nil
		want := "line 4 (byte " + itoa(st.Size()) + "): a line longer than airlock writes"
		var verr error
		n := allocated(func() { _, verr = audit.VerifyLog(path) })
		if verr == nil || !strings.Contains(verr.Error(), want) {
			t.Errorf("newline %v: verify: %v, want %q", newline, verr, want)
		}
		if n > 8<<20 {
			t.Errorf("newline %v: verify of a 32 MiB line allocated %d bytes", newline, n)
		}
		var l *audit.Log
		n = allocated(func() { l, err = audit.Open(path) })
		if err != nil {
			t.Fatal(err)
		}
		// Without a newline, Open finds the end cut before it reads any of it.
		if p := l.Problem(); !l.Damaged() || !strings.Contains(p.Error(), "longer than airlock writes") && (newline || !strings.Contains(p.Error(), "cut short")) {
			t.Errorf("newline %v: Open: damaged %v, %v", newline, l.Damaged(), p)
		}
		l.Close()
		if n > 8<<20 {
			t.Errorf("newline %v: Open of a log ending in a 32 MiB line allocated %d bytes", newline, n)
		}
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// A line longer than airlock writes before the log's end is named by verify and
// is a notice from Open (the records after it seal it in).
func TestLog_ALongLineBeforeTheEndIsANotice(t *testing.T) {
	a, path := openTemp(t)
	big := audit.Record{Kind: "decision", Args: json.RawMessage(`{"q":"` + strings.Repeat("x", 100<<10) + `"}`)}
	for _, r := range []audit.Record{rec(1), big, rec(3)} {
		if err := a.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	defer audit.SetMaxRecordBytes(64 << 10)()
	if _, err := audit.VerifyLog(path); err == nil || !strings.Contains(err.Error(), "line 2 (byte ") || !strings.Contains(err.Error(), "longer than airlock writes") {
		t.Errorf("verify: %v", err)
	}
	l, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if p := l.Problem(); p == nil || l.Damaged() || !strings.Contains(p.Error(), "longer than airlock writes") {
		t.Errorf("Open: damaged %v, %v", l.Damaged(), p)
	}
}
