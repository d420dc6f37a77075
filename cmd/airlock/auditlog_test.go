package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/airlock-mcp/airlock/session/audit"
)

// docsConfig is a config whose one server is the trusted demo docs server, with its
// state (and audit log) in state.
func docsConfig(t *testing.T, state string) string {
	t.Helper()
	return stateConfig(t, state, demoServerTOML("docs", "trusted"))
}

// writeRecords appends n records to the audit log at path and closes it.
func writeRecords(t *testing.T, path string, n int) {
	t.Helper()
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := a.Append(audit.Record{Kind: "decision", CallID: fmt.Sprint("c", i), Server: "docs", Tool: "get_doc", Decision: "allow", Args: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

// A log cut to 2 of its 5 records keeps saying so: the next `airlock call` does not
// append to it (nor rewrite its head), it is refused with a sentence saying what is
// wrong and what to do, and `airlock audit verify` still reports the cut. `airlock
// audit seal --start-new` moves it aside, whole, and starts a new log whose first
// record names it; calls then run again.
func TestAuditCutLog_NextCallKeepsTheEvidence(t *testing.T) {
	state := t.TempDir()
	cfg := docsConfig(t, state)
	log := filepath.Join(state, "audit.jsonl")
	writeRecords(t, log, 5)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	if err := os.WriteFile(log, bytes.Join(lines[:2], nil), 0o600); err != nil {
		t.Fatal(err)
	}
	r := auditVerify(t, cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "3 records removed from the end") {
		t.Fatalf("verify of the cut log: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = getDoc(t, cfg)
	if r.code == 0 || strings.Contains(r.stdout, "result") {
		t.Errorf("a call with the cut log ran: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"3 records removed from the end", "airlock audit verify", "airlock audit seal --start-new"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, r.stderr)
		}
	}
	r = auditVerify(t, cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "3 records removed from the end") {
		t.Fatalf("verify after the call: exit %d %q %q (the evidence of the cut is gone)", r.code, r.stdout, r.stderr)
	}

	r = airlock(t, "", "audit", "seal", "--start-new", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "moved") {
		t.Fatalf("seal: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	moved, _ := filepath.Glob(log + ".sealed-*")
	var sealed string
	for _, m := range moved {
		if !strings.HasSuffix(m, ".head") {
			sealed = m
		}
	}
	if sealed == "" {
		t.Fatalf("no sealed log beside %s: %v", log, moved)
	}
	// The old log is kept, whole, with its head: verify still shows the cut.
	r = airlock(t, "", "audit", "verify", sealed)
	if r.code != 1 || !strings.Contains(r.stderr, "3 records removed from the end") {
		t.Errorf("verify of the sealed log: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = getDoc(t, cfg)
	if r.code != 0 {
		t.Fatalf("a call after the seal: exit %d %s", r.code, r.stderr)
	}
	r = auditVerify(t, cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "3 records, chain intact") || !strings.Contains(r.stdout, filepath.Base(sealed)) {
		t.Errorf("verify of the new log: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	first, _, _ := bytes.Cut(must(os.ReadFile(log)), []byte("\n"))
	var rec audit.Record
	if err := json.Unmarshal(first, &rec); err != nil || rec.Kind != "sealed" || rec.Previous == nil ||
		rec.Previous.File != filepath.Base(sealed) || rec.Previous.Seq != 5 || !strings.Contains(rec.Reason, "3 records removed") {
		t.Errorf("the new log's first record does not name the old log and its head: %s", first)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Many short `airlock call`s at once against one state dir, each opening the log
// while others append, and while a busy process (a gateway, played by this test)
// appends large records all the while: every call runs and the chain verifies.
func TestAuditManyProcesses_AllCallsRun(t *testing.T) {
	state := t.TempDir()
	cfg := docsConfig(t, state)
	log := filepath.Join(state, "audit.jsonl")
	busy, err := audit.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	big := audit.Record{Kind: "decision", Args: json.RawMessage(`{"q":"` + strings.Repeat("x", 128<<10) + `"}`)}
	stop, written := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		defer func() { written <- n }()
		for n < 600 {
			select {
			case <-stop:
				return
			default:
			}
			if err := busy.AppendUnsynced(big); err != nil {
				t.Error(err)
				return
			}
			n++
		}
	}()
	const n = 24
	var wg sync.WaitGroup
	results := make([]result, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = airlockIn(t, state, "", "call", "docs", "search_docs", "--config", cfg, "--args", `{"query":"trust"}`)
		}()
	}
	wg.Wait()
	close(stop)
	busyRecords := <-written
	busy.Close()
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("call %d of %d: exit %d %s", i+1, n, r.code, r.stderr)
		}
	}
	r := auditVerify(t, cfg)
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("%d records, chain intact", 2*n+busyRecords)) {
		t.Errorf("verify: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// A changed record in the middle of the log is reported, not refused (nothing
// appended after it can hide it): `airlock call` prints a notice and runs, and
// `airlock check` verifies the whole log and prints one too.
func TestAuditDamagedMiddleRecord_NoticeInCallAndCheck(t *testing.T) {
	state := t.TempDir()
	cfg := docsConfig(t, state)
	log := filepath.Join(state, "audit.jsonl")
	writeRecords(t, log, 5)
	b := must(os.ReadFile(log))
	if err := os.WriteFile(log, bytes.Replace(b, []byte(`"c2"`), []byte(`"c7"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	r := getDoc(t, cfg)
	if r.code != 0 || !strings.Contains(r.stderr, "is damaged") || !strings.Contains(r.stderr, "airlock audit verify") {
		t.Errorf("a call with a damaged middle record: exit %d, no notice:\n%s", r.code, r.stderr)
	}
	r = airlock(t, "", "check", "--config", cfg)
	if !strings.Contains(r.stderr, "notice: the audit log") || !strings.Contains(r.stderr, "line 3: hash mismatch") {
		t.Errorf("check with a damaged middle record: exit %d, no notice:\n%s", r.code, r.stderr)
	}
	r = auditVerify(t, cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "line 3: hash mismatch") {
		t.Errorf("verify: exit %d %q", r.code, r.stderr)
	}
}

// `airlock audit verify` where there is no audit log at all (no config, no demo
// folder; or a --config whose state dir holds none) says so plainly, names the path
// and how to point at another log, and exits with its own code. It never advises
// sealing a log that does not exist.
func TestAuditVerify_NoLogSaysSo(t *testing.T) {
	state := t.TempDir()
	r := airlockIn(t, state, "", "audit", "verify")
	want := filepath.Join(state, "airlock", "demo", "audit.jsonl")
	if r.code != exitNoAuditLog || !strings.Contains(r.stderr, "no audit log at "+want) ||
		!strings.Contains(r.stderr, "--config") || !strings.Contains(r.stderr, "--demo") {
		t.Errorf("verify with no config and no demo folder: exit %d, want %d naming %s\n%s%s", r.code, exitNoAuditLog, want, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "seal") || strings.Contains(r.stderr, "no such file") {
		t.Errorf("verify of a log that does not exist advises sealing it, or says only the system's error:\n%s", r.stderr)
	}

	cfg := docsConfig(t, t.TempDir())
	r = auditVerify(t, cfg)
	if r.code != exitNoAuditLog || !strings.Contains(r.stderr, "no audit log at") || strings.Contains(r.stderr, "seal") {
		t.Errorf("verify with a config whose state dir holds no log: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A head whose log is gone is not "no log": records were removed.
	st := t.TempDir()
	cfg = docsConfig(t, st)
	log := filepath.Join(st, "audit.jsonl")
	writeRecords(t, log, 3)
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	r = auditVerify(t, cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "records removed") {
		t.Errorf("verify of a log removed beside its head: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A log whose current file was removed beside its head is records removed, not "no
// log": `airlock check` says so, and says nothing where there never was a log.
func TestAuditRemovedLog_NoticeInCheck(t *testing.T) {
	state := t.TempDir()
	cfg := docsConfig(t, state)
	r := airlock(t, "", "check", "--config", cfg)
	if strings.Contains(r.stderr, "audit log") {
		t.Errorf("check with no audit log at all: %q, want no notice", r.stderr)
	}
	log := filepath.Join(state, "audit.jsonl")
	writeRecords(t, log, 5)
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	r = airlock(t, "", "check", "--config", cfg)
	if !strings.Contains(r.stderr, "notice: the audit log") || !strings.Contains(r.stderr, "records removed") {
		t.Errorf("check after audit.jsonl was removed beside its head: exit %d, no notice:\n%s", r.code, r.stderr)
	}
}
