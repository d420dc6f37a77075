//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/fulldisk"
	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
)

// A full disk: the call that cannot be recorded is refused and says why; the
// record it could not finish is not left cut in the file; once there is space
// again the next call runs in the same process; and after a restart airlock starts
// and the chain verifies. On a real tmpfs filled to the brim.
func TestAuditFullDisk_RefusedThenRecovers(t *testing.T) {
	state, path, a, m, call := startDocsOnTmpfs(t)
	if err := call(); err != nil {
		t.Fatalf("a call before the disk is full: %v", err)
	}
	filler := fulldisk.Fill(t, state)
	var refused error
	for range 64 { // the log's last page has room for a few records
		if err := call(); err != nil {
			refused = err
			break
		}
	}
	var denied *model.DeniedError
	if !errors.As(refused, &denied) || !strings.Contains(refused.Error(), "audit log") || !strings.Contains(refused.Error(), "no space left on device") {
		t.Fatalf("a call on a full disk: %v; want a denial naming the audit log and the full disk", refused)
	}
	if p := m.AuditProblem(); p == nil || !strings.Contains(p.Error(), "no space left on device") {
		t.Errorf("the status of the audit log on a full disk: %v", p)
	}
	if _, err := audit.Verify(bytes.NewReader(must(os.ReadFile(state + "/audit.jsonl")))); err != nil {
		t.Errorf("the log after the failed write: %v (a cut record was left in it)", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := call(); err != nil {
		t.Errorf("after space returned the call was still refused: %v", err)
	}
	if p := m.AuditProblem(); p != nil {
		t.Errorf("after space returned the audit log still says: %v", p)
	}
	m.Close()
	a.Close()

	r := getDoc(t, path)
	if r.code != 0 {
		t.Errorf("after a restart: exit %d %s", r.code, r.stderr)
	}
	r = auditVerify(t, path)
	if r.code != 0 || !strings.Contains(r.stdout, "chain intact") {
		t.Errorf("verify after a restart: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// `airlock audit verify` opens the log as airlock does: a FIFO in its place is
// refused at once (never waited on), and a symbolic link is refused, not followed.
func TestAuditVerify_RefusesFIFOAndLink(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "audit.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	verify := func(path string) (result, bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, selfPath(t), "audit", "verify", path)
		cmd.Env = append(os.Environ(), "AIRLOCK_AS_MAIN=1")
		return runResult(t, cmd), ctx.Err() == nil
	}
	r, finished := verify(fifo)
	if !finished {
		t.Fatal("verify of a FIFO hung")
	}
	if r.code != 1 || !strings.Contains(r.stderr, "not a regular file") {
		t.Errorf("verify of a FIFO: exit %d %q %q", r.code, r.stdout, r.stderr)
	}

	real := filepath.Join(dir, "real.jsonl")
	writeRecords(t, real, 2)
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	r, _ = verify(link)
	if r.code != 1 || !strings.Contains(r.stderr, "symbolic link") {
		t.Errorf("verify of a link: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	// A link in the head's place is refused too.
	if err := os.Rename(real+".head", real+".head.real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real+".head.real", real+".head"); err != nil {
		t.Fatal(err)
	}
	r, _ = verify(real)
	if r.code != 1 || !strings.Contains(r.stderr, "symbolic link") {
		t.Errorf("verify with a linked head: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// A head file that cannot be written on a full disk is not silent: the session's
// audit problem (the TUI's red status) says so while the records still go in, and
// `airlock call` prints it; the next commit once there is space writes the head.
// On a real tmpfs filled to the brim: the log's last page still has room for a
// call's records, but no page is left for a new head file.
func TestAuditFullDisk_HeadThatCannotBeWrittenIsSaid(t *testing.T) {
	state, path, a, m, call := startDocsOnTmpfs(t)
	if err := call(); err != nil {
		t.Fatalf("a call before the disk is full: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // the delayed sync writes the head
	filler := fulldisk.Fill(t, state)
	if err := call(); err != nil {
		t.Fatalf("a call whose records fit the log's last page: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for m.AuditProblem() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if p := m.AuditProblem(); p == nil || !strings.Contains(p.Error(), "head file could not be written") || !strings.Contains(p.Error(), "no space left on device") {
		t.Errorf("the audit status after a head write failed on a full disk: %v", p)
	}
	m.Close()
	a.Close()

	r := getDoc(t, path)
	if !strings.Contains(r.stderr, "head file could not be written") {
		t.Errorf("airlock call on a full disk whose head cannot be written: exit %d, says nothing of the head:\n%s", r.code, r.stderr)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	r = getDoc(t, path)
	if r.code != 0 || strings.Contains(r.stderr, "head file") {
		t.Errorf("once there is space: exit %d\n%s", r.code, r.stderr)
	}
	r = auditVerify(t, path)
	if r.code != 0 || !strings.Contains(r.stdout, "chain intact") {
		t.Errorf("verify once there is space: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// startDocsOnTmpfs starts the docs server's Manager with its audit log on a fresh
// 256 KiB tmpfs: the state folder, the config's path, the log, the Manager, and
// one call of docs__get_doc through it. The caller closes the Manager and the log.
func startDocsOnTmpfs(t *testing.T) (state, path string, a *audit.Log, m *session.Manager, call func() error) {
	t.Helper()
	state = fulldisk.Mount(t, "256k")
	path = docsConfig(t, state)
	cfg, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if a, err = openAudit(cfg); err != nil {
		t.Fatal(err)
	}
	if m, err = newManager(cfg, session.Options{Audit: a}); err != nil {
		t.Fatal(err)
	}
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	call = func() error {
		_, err := m.Call(ctx, model.CallRequest{Server: "docs", Tool: "get_doc", Args: json.RawMessage(`{"id":"mcp-overview"}`)})
		return err
	}
	return state, path, a, m, call
}
