package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/demo"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/trust"
)

// `airlock gateway token add NAME | list | revoke NAME`: the value is printed once
// and kept nowhere (only its SHA-256, in a private file), names are checked, a name
// in use is refused, list shows no value, and add and revoke are audited.
func TestGatewayTokenAddListRevoke(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, "state_dir = \""+state+"\"\n")
	r := airlock(t, "", "gateway", "token", "add", "ci-bot", "--config", cfg)
	tok := strings.TrimSpace(r.stdout)
	if r.code != 0 || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(tok) || !strings.Contains(r.stderr, "shown once") {
		t.Fatalf("add: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "gateway", "token", "add", "ci-bot", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "exists") {
		t.Errorf("add of a name in use: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "gateway", "token", "add", "CI Bot", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "use 1 to 32 of a-z, 0-9, _ and -") {
		t.Errorf("add of a bad name: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "gateway", "token", "add", "laptop", "--export", "--config", cfg)
	if r.code != 0 || !regexp.MustCompile(`^export AIRLOCK_TOKEN='?[0-9a-f]{64}'?\n$`).MatchString(r.stdout) {
		t.Errorf("add --export: exit %d\n%q%s", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(state, "gateway-tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), tok) {
		t.Error("the tokens file holds a token's value")
	}
	if st, err := os.Stat(filepath.Join(state, "gateway-tokens.json")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the tokens file's mode: %v %v", st.Mode(), err)
	}
	r = airlock(t, "", "gateway", "token", "list", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "ci-bot") || !strings.Contains(r.stdout, "token:laptop") || !strings.Contains(r.stdout, "default") || strings.Contains(r.stdout, tok) {
		t.Errorf("list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "gateway", "token", "revoke", "ci-bot", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "revoked the gateway token ci-bot") {
		t.Errorf("revoke: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "gateway", "token", "revoke", "ci-bot", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "no token has that name") {
		t.Errorf("revoke twice: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "gateway", "token", "list", "--config", cfg)
	if r.code != 0 || strings.Contains(r.stdout, "ci-bot") || !strings.Contains(r.stdout, "laptop") {
		t.Errorf("list after revoke: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	log, err := os.ReadFile(filepath.Join(state, "audit.jsonl"))
	if err != nil || !regexp.MustCompile(`"context":"token:ci-bot".*"kind":"token-added"`).Match(log) || !regexp.MustCompile(`"context":"token:ci-bot".*"kind":"token-revoked"`).Match(log) {
		t.Errorf("add and revoke are not audited (%v):\n%s", err, log)
	}
	// A tokens file that cannot be read is said, and never overwritten.
	if err := os.WriteFile(filepath.Join(state, "gateway-tokens.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"list"}, {"add", "other"}, {"revoke", "laptop"}} {
		r = airlock(t, "", append(append([]string{"gateway", "token"}, args...), "--config", cfg)...)
		if r.code != 1 || !strings.Contains(r.stderr, "gateway-tokens.json cannot be read") {
			t.Errorf("%v over a garbled file: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(state, "gateway-tokens.json")); string(b) != "{" {
		t.Errorf("the garbled file was rewritten: %q", b)
	}
}

// A token added by another process (the real `airlock gateway token add`) is
// accepted by a running gateway through the real `airlock bridge --token-env`; the
// agent's question is for the token's context whatever it calls itself, and
// revoking the token from another process withdraws it: nothing runs.
func TestBridgeProcess_NamedTokenAddedThenRevoked(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(state, "none"))
	_, stateDir, err := gatewayTarget("", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	token, err := gateway.OpenToken(stateDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	al, err := audit.Open(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	set := demo.NewSet()
	opts := session.Options{Audit: al, MemoryTaint: true, InProcess: map[string]*mcp.Server{}}
	for _, n := range demo.Names() {
		opts.InProcess[n] = set.Server(n)
	}
	cfg := demo.Config()
	cfg.ApprovalTimeout = time.Minute
	m := session.New(cfg, opts)
	defer m.Close()
	m.Start()
	wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
	defer wcancel()
	if err := m.Wait(wctx); err != nil {
		t.Fatal(err)
	}
	asked := make(chan *session.Pending, 4)
	go func() {
		for {
			ev, ok := m.Next(context.Background())
			if !ok {
				return
			}
			if r, ok := ev.(session.ApprovalRequested); ok {
				asked <- r.Pending
			}
		}
	}()
	g, err := gateway.New(m, gateway.Options{Listen: "127.0.0.1:0", Token: token, TokensFile: gateway.TokensPath(stateDir)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	defer g.Close()

	r := airlockIn(t, state, "", "gateway", "token", "add", "ci-bot", "--demo", "--export")
	named := strings.Trim(strings.TrimPrefix(strings.TrimSpace(r.stdout), "export AIRLOCK_TOKEN="), "'")
	if r.code != 0 || len(named) != 64 {
		t.Fatalf("token add: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(g.URL(), "http://"), "/mcp")
	bridge := exec.Command(self, "bridge", "--demo", "--gateway", addr, "--token-env", "AIRLOCK_TOKEN")
	bridge.Env = append(os.Environ(), "AIRLOCK_AS_MAIN=1", "AIRLOCK_TOKEN="+named)
	stdin, err := bridge.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := bridge.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := bridge.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bridge.Process.Kill(); _ = bridge.Wait() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "1"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("the bridge with the named token did not connect: %v", err)
	}
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes__delete_note", Arguments: map[string]any{"id": "note-1"}})
	}()
	var p *session.Pending
	select {
	case p = <-asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the call through the bridge never asked")
	}
	if p.Request.Context != "token:ci-bot" || p.Request.Client != "claude-code" {
		t.Errorf("the question is for context %q client %q, want token:ci-bot, claude-code", p.Request.Context, p.Request.Client)
	}
	if r := airlockIn(t, state, "", "gateway", "token", "revoke", "ci-bot", "--demo"); r.code != 0 {
		t.Fatalf("token revoke: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(m.Engine().Pending()) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the revoked token's question still waits 10 s later")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := m.Engine().Answer(p.ID, session.Response{Answer: session.AllowOnce}); err == nil {
		t.Error("the withdrawn question could still be allowed")
	}
	var kinds []string
	for time.Now().Before(deadline) {
		if kinds = goneCallRecords(t, auditPath, p.CallID); len(kinds) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(kinds) != 1 || kinds[0] != "decision:deny:"+string(trust.DecidedByAgentGone) {
		t.Errorf("audit of the call %v, want one deny decided_by agent-gone", kinds)
	}
	out, err := m.Call(context.Background(), session.CallRequest{Server: "notes", Tool: "list_notes"})
	if err != nil || !strings.Contains(goneText(out.Result), "note-1") {
		t.Errorf("note-1 is gone after its token was revoked: %v", err)
	}
}
