package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/demo"
	"github.com/airlock-mcp/airlock/session/pins"
	"github.com/airlock-mcp/airlock/trust"
)

// Child processes of the state tests are this test binary with AIRLOCK_TEST_SERVER
// set to their mode. Each opens the shared state, says it is ready (a file
// ready-ID in AIRLOCK_TEST_DIR), waits for the file "go", then writes: so every child
// has read the state before any of them changes it, the worst case for lost updates.
func serveStateChild(mode string) int {
	dir, id := os.Getenv("AIRLOCK_TEST_DIR"), os.Getenv("AIRLOCK_TEST_ID")
	barrier := func() {
		_ = os.WriteFile(filepath.Join(dir, "ready-"+id), nil, 0o600)
		for {
			if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	switch mode {
	case "audit-append":
		a, err := audit.Open(filepath.Join(dir, "audit.jsonl"))
		if err != nil {
			return fail(err)
		}
		n, _ := strconv.Atoi(os.Getenv("AIRLOCK_TEST_N"))
		barrier()
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				errs <- a.Append(audit.Record{Kind: "decision", CallID: fmt.Sprintf("p%s-%d", id, i), Context: "you",
					Server: "notes", Tool: "create_note", Tier: "write", Decision: "allow", DecidedBy: "policy", Args: json.RawMessage(`{}`)})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				return fail(err)
			}
		}
		return 0
	case "pins-accept":
		p, err := pins.Open(filepath.Join(dir, "pins.json"))
		if err != nil {
			return fail(err)
		}
		barrier()
		def := json.RawMessage(`{"name":"t` + id + `","inputSchema":{"type":"object"}}`)
		if err := p.Accept("stdio:server-"+id, "server-"+id, nil, map[string]json.RawMessage{"t" + id: def}, time.Now()); err != nil {
			return fail(err)
		}
		return 0
	case "taint-write":
		// Taints AIRLOCK_TEST_N contexts of its own (ctx-ID-J) and clears the context
		// old-ID, which the test wrote before: every child read the file (old-0..3
		// tainted) before any of them writes, so a write from what it read would undo
		// another child's clear, and a write without the lock would lose a taint.
		e := session.NewTaintEngine(dir)
		if got := e.Taints(); len(got) != 4 {
			return fail(fmt.Errorf("child %s read %d tainted contexts, want 4", id, len(got)))
		}
		n, _ := strconv.Atoi(os.Getenv("AIRLOCK_TEST_N"))
		barrier()
		for j := range n {
			if j == n/2 {
				if err := e.ClearTaint("old-" + id); err != nil {
					return fail(err)
				}
			}
			e.TaintContext(fmt.Sprintf("ctx-%s-%d", id, j), trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch"},
				CallID: fmt.Sprintf("p%s-%d", id, j), At: time.Now(), Channel: trust.ChannelResult})
		}
		return 0
	case "callid":
		// One allowed call through a Manager; prints its call id.
		docs, _ := demo.New("docs")
		cfg := &config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute,
			Servers: []config.Server{{Name: "docs", Trust: trust.Trusted, ConnectTimeout: 10 * time.Second, CallTimeout: 10 * time.Second}}}
		m := session.New(cfg, session.Options{InProcess: map[string]*mcp.Server{"docs": docs}})
		defer m.Close()
		m.Start()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := m.Wait(ctx); err != nil {
			return fail(err)
		}
		barrier()
		out, err := m.Call(ctx, model.CallRequest{Server: "docs", Tool: "search_docs", Args: json.RawMessage(`{"query":"tier"}`)})
		if err != nil {
			return fail(err)
		}
		fmt.Println(out.CallID)
		return 0
	}
	return 2
}

// runChildren starts n children in mode sharing dir, releases them together once all
// are ready, and returns their stdout.
func runChildren(t *testing.T, mode, dir string, n int, extra ...string) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmds := make([]*exec.Cmd, n)
	outs := make([]*strings.Builder, n)
	for i := range n {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), "AIRLOCK_TEST_SERVER="+mode, "AIRLOCK_TEST_DIR="+dir, "AIRLOCK_TEST_ID="+strconv.Itoa(i),
			"GORACE=atexit_sleep_ms=0")
		cmd.Env = append(cmd.Env, extra...)
		outs[i] = &strings.Builder{}
		cmd.Stdout = outs[i]
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	sessiontest.WaitFor(t, "children ready", time.Minute, func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "ready-*"))
		return len(m) == n
	})
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res := make([]string, n)
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d (%s): %v", i, mode, err)
		}
		res[i] = strings.TrimSpace(outs[i].String())
	}
	return res
}

// TestAudit_FourProcessesOneChain: four airlock processes append to one audit log at
// once, 50 records each from 50 goroutines; the log is one chain holding all 200.
func TestAudit_FourProcessesOneChain(t *testing.T) {
	dir := t.TempDir()
	runChildren(t, "audit-append", dir, 4, "AIRLOCK_TEST_N=50")
	path := filepath.Join(dir, "audit.jsonl")
	n, err := audit.VerifyFile(path)
	if err != nil {
		t.Fatalf("audit verify: %v (after %d good records)", err, n)
	}
	if n != 200 {
		t.Errorf("the log holds %d records, want 200", n)
	}
	b, _ := os.ReadFile(path)
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if seen[r.CallID] {
			t.Errorf("record %s appears twice", r.CallID)
		}
		seen[r.CallID] = true
	}
	if len(seen) != 200 {
		t.Errorf("%d distinct records, want 200", len(seen))
	}
}

// TestPins_TwoProcessesBothSurvive: two processes that both loaded the pins pin
// different servers; neither overwrites the other's pin.
func TestPins_TwoProcessesBothSurvive(t *testing.T) {
	dir := t.TempDir()
	runChildren(t, "pins-accept", dir, 2)
	p, err := pins.Open(filepath.Join(dir, "pins.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"0", "1"} {
		if _, ok := p.Pinned("stdio:server-"+id, "t"+id); !ok {
			t.Errorf("the pin of server-%s was lost; pins: %v", id, p.List())
		}
	}
}

// TestTaint_FourProcessesNoLostWrite: four processes that all read taint.json taint
// contexts of their own and each clear one context at once; every taint survives, and
// no clear is undone by another process writing what it read before
// (taint.json under a lock).
func TestTaint_FourProcessesNoLostWrite(t *testing.T) {
	dir := t.TempDir()
	seed := session.NewTaintEngine(dir)
	for i := range 4 {
		seed.TaintContext(fmt.Sprintf("old-%d", i), trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch"},
			CallID: fmt.Sprintf("seed-%d", i), At: time.Now()})
	}
	const n = 25
	runChildren(t, "taint-write", dir, 4, "AIRLOCK_TEST_N="+strconv.Itoa(n))
	list, err := approval.ListTaints(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range list {
		got[c.Context] = true
	}
	for i := range 4 {
		if got[fmt.Sprintf("old-%d", i)] {
			t.Errorf("old-%d was cleared by its process, but another process's write put it back", i)
		}
		for j := range n {
			if c := fmt.Sprintf("ctx-%d-%d", i, j); !got[c] {
				t.Errorf("the taint of %s was lost", c)
			}
		}
	}
	if len(got) != 4*n {
		t.Errorf("%d tainted contexts, want %d", len(got), 4*n)
	}
}

// TestCallIDs_UniqueAcrossProcesses: two processes' first calls get different ids, so
// records in a shared audit log never name one call id for two calls.
func TestCallIDs_UniqueAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	ids := runChildren(t, "callid", dir, 2)
	if ids[0] == "" || ids[0] == ids[1] {
		t.Errorf("call ids of two processes: %q and %q, want distinct", ids[0], ids[1])
	}
}

// TestPins_IdentityNeverHoldsExpandedSecret: ${VAR} is expanded in args and url, but
// the pin identity stored in pins.json keeps the reference, never the secret.
func TestPins_IdentityNeverHoldsExpandedSecret(t *testing.T) {
	src := "[servers.x]\ncommand = \"srv\"\nargs = [\"--key=${K}\"]\n[servers.y]\nurl = \"https://h/mcp?k=${K}\"\n"
	cfg, err := config.Parse([]byte(src), "config.toml", func(k string) (string, bool) {
		if k == "K" {
			return "s3cret", true
		}
		return "/h", true
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cfg.Servers {
		if id := pins.Identity(s); strings.Contains(id, "s3cret") || !strings.Contains(id, "${K}") {
			t.Errorf("identity of %s = %q", s.Name, id)
		}
	}
}

// TestTaint_ClearShownIsBoundAndAudited: the TUI's clear (ClearTaintShown) clears only
// the taint the person was shown, and writes a taint-cleared record by the person
// naming what tainted the context.
func TestTaint_ClearShownIsBoundAndAudited(t *testing.T) {
	dir := t.TempDir()
	a, err := audit.Open(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	e := session.NewTaintEngine(dir)
	e.SetAudit(a)
	shown := trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch"}, CallID: "c1", At: time.Unix(100, 0), Channel: trust.ChannelProgress}
	e.TaintContext("agent-x-1", shown)
	// Cleared elsewhere and tainted anew while the question was on screen.
	if _, err := approval.ClearTaints(dir, "agent-x-1", nil); err != nil {
		t.Fatal(err)
	}
	e.TaintContext("agent-x-1", trust.Taint{By: trust.Ref{Server: "evil", Tool: "page"}, CallID: "c2", At: time.Unix(200, 0)})
	if err := e.ClearTaintShown("agent-x-1", shown); !errors.Is(err, approval.ErrTaintChanged) {
		t.Fatalf("clearing a taint not shown: err = %v, want ErrTaintChanged", err)
	}
	now := e.Taint("agent-x-1")
	if now.CallID != "c2" {
		t.Fatalf("taint after the refused clear = %+v", now)
	}
	if err := e.ClearTaintShown("agent-x-1", now); err != nil {
		t.Fatal(err)
	}
	if e.Taint("agent-x-1").Tainted() {
		t.Fatal("the shown taint was not cleared")
	}
	if list, _ := approval.ListTaints(dir); len(list) != 0 {
		t.Fatalf("taint.json still lists %v", list)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	var r audit.Record
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		t.Fatal(err)
	}
	if r.Kind != "taint-cleared" || r.Context != "agent-x-1" || r.DecidedBy != "person" || r.CallID != "c2" || !strings.Contains(r.Reason, "evil__page") {
		t.Errorf("audit record = %+v", r)
	}
}

// taint.json is a file airlock trusts like pins: a link in its place (to a file that
// says no context is tainted, say) is refused, never read.
func TestTaint_SymlinkedFileRefused(t *testing.T) {
	state := t.TempDir()
	forged := filepath.Join(t.TempDir(), "forged.json")
	if err := os.WriteFile(forged, []byte(`{"version":1,"contexts":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(forged, filepath.Join(state, "taint.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := approval.ListTaints(state); err == nil || !strings.Contains(err.Error(), "link") {
		t.Fatalf("a symlinked taint.json was read: %v", err)
	}
}
