package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/demo"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/trust"
)

// bridgeRig is what the `airlock bridge` process tests run against: a demo Manager
// in this process, audited to a file, with its gateway on 127.0.0.1 and the
// approval questions it raises arriving on asked. Everything closes at the test's
// end.
type bridgeRig struct {
	m         *session.Manager
	g         *gateway.Gateway
	asked     chan *model.Pending
	auditPath string
	stateDir  string
}

// startBridgeRig points XDG_STATE_HOME at state (and the config nowhere), opens the
// demo gateway's token there and starts the rig; with tokensFile the gateway also
// accepts the named tokens of that state folder.
func startBridgeRig(t *testing.T, state string, tokensFile bool) *bridgeRig {
	t.Helper()
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
	r := &bridgeRig{auditPath: filepath.Join(t.TempDir(), "audit.jsonl"), stateDir: stateDir, asked: make(chan *model.Pending, 4)}
	al, err := audit.Open(r.auditPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { al.Close() })
	set := demo.NewSet()
	opts := session.Options{Audit: al, MemoryTaint: true, InProcess: map[string]*mcp.Server{}}
	for _, n := range demo.Names() {
		opts.InProcess[n] = set.Server(n)
	}
	cfg := demo.Config()
	cfg.ApprovalTimeout = time.Minute
	r.m = session.New(cfg, opts)
	t.Cleanup(func() { r.m.Close() })
	r.m.Start()
	wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
	defer wcancel()
	if err := r.m.Wait(wctx); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			ev, ok := r.m.Next(context.Background())
			if !ok {
				return
			}
			if req, ok := ev.(model.ApprovalRequested); ok {
				r.asked <- req.Pending
			}
		}
	}()
	gopts := gateway.Options{Listen: "127.0.0.1:0", Token: token}
	if tokensFile {
		gopts.TokensFile = gateway.TokensPath(stateDir)
	}
	if r.g, err = gateway.New(r.m, gopts); err != nil {
		t.Fatal(err)
	}
	if err := r.g.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.g.Close() })
	return r
}

// bridge starts this test binary as `airlock bridge --demo --gateway ADDR args...`
// with env added to its environment, killed at the test's end; it returns the
// agent's ends of its stdio.
func (r *bridgeRig) bridge(t *testing.T, args []string, env ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	t.Helper()
	addr := strings.TrimSuffix(strings.TrimPrefix(r.g.URL(), "http://"), "/mcp")
	bridge := asAirlock(t, nil, env, append([]string{"bridge", "--demo", "--gateway", addr}, args...)...)
	stdin, stdout := startPiped(t, bridge)
	t.Cleanup(func() { _ = bridge.Process.Kill(); _ = bridge.Wait() })
	return bridge, stdin, stdout
}

// askDelete connects an agent called client over the bridge's stdio and has it
// call notes__delete_note on note-1 in the background; it returns the question that
// call raises.
func (r *bridgeRig) askDelete(t *testing.T, client string, stdin io.WriteCloser, stdout io.ReadCloser) *model.Pending {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("the agent did not connect through the bridge: %v", err)
	}
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes__delete_note", Arguments: map[string]any{"id": "note-1"}})
	}()
	select {
	case p := <-r.asked:
		return p
	case <-time.After(20 * time.Second):
		t.Fatal("the call through the bridge never asked")
	}
	return nil
}

// withdrawn checks what follows when the agent behind question p goes away at
// left: the question is withdrawn within 10 s, cannot be allowed afterwards, is
// audited as one deny decided_by agent-gone (still one a moment later), and
// note-1 is not deleted. what names the case in failures.
func (r *bridgeRig) withdrawn(t *testing.T, what string, p *model.Pending, left time.Time) {
	t.Helper()
	for len(r.m.Engine().Pending()) > 0 {
		if time.Since(left) > 10*time.Second {
			t.Fatalf("%s: the question still waits 10 s later", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("%s: question withdrawn %v after the agent left", what, time.Since(left).Round(time.Millisecond))
	if err := r.m.Engine().Answer(p.ID, model.Response{Answer: model.AllowOnce}); err == nil {
		t.Errorf("%s: the withdrawn question could still be allowed", what)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && len(goneCallRecords(t, r.auditPath, p.CallID)) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	kinds := goneCallRecords(t, r.auditPath, p.CallID)
	if len(kinds) != 1 || kinds[0] != "decision:deny:"+string(trust.DecidedByAgentGone) {
		t.Errorf("%s: audit of the call %v, want one deny decided_by agent-gone", what, kinds)
	}
	out, err := r.m.Call(context.Background(), model.CallRequest{Server: "notes", Tool: "list_notes"})
	if err != nil || !strings.Contains(goneText(out.Result), "note-1") {
		t.Errorf("%s: note-1 is gone after its agent left: %v", what, err)
	}
}

// A stdio agent that runs the real `airlock bridge` and goes away while its call
// waits for a person, by closing the bridge's stdin or by the bridge being killed
// with it: the question is withdrawn at once, audited agent-gone, and the note is
// not deleted.
func TestBridgeProcess_AgentGoneWithdrawsItsQuestion(t *testing.T) {
	for _, how := range []string{"stdin closed", "bridge killed"} {
		t.Run(strings.ReplaceAll(how, " ", "_"), func(t *testing.T) {
			r := startBridgeRig(t, t.TempDir(), false)
			bridge, stdin, stdout := r.bridge(t, nil)
			// The agent's own end of the pipes, closed by hand: go-sdk's Close waits
			// for the call in flight before it closes the bridge's stdin.
			p := r.askDelete(t, "stdio-agent", stdin, stdout)
			left := time.Now()
			if how == "bridge killed" {
				_ = bridge.Process.Kill()
			} else {
				_ = stdin.Close() // the agent's terminal closed
			}
			r.withdrawn(t, how, p, left)
		})
	}
}

// A token added by another process (the real `airlock gateway token add`) is
// accepted by a running gateway through the real `airlock bridge --token-env`; the
// agent's question is for the token's context whatever it calls itself, and
// revoking the token from another process withdraws it: nothing runs.
func TestBridgeProcess_NamedTokenAddedThenRevoked(t *testing.T) {
	state := t.TempDir()
	r := startBridgeRig(t, state, true)
	out := airlockIn(t, state, "", "gateway", "token", "add", "ci-bot", "--demo", "--export")
	named := strings.Trim(strings.TrimPrefix(strings.TrimSpace(out.stdout), "export AIRLOCK_TOKEN="), "'")
	if out.code != 0 || len(named) != 64 {
		t.Fatalf("token add: exit %d\n%s%s", out.code, out.stdout, out.stderr)
	}
	_, stdin, stdout := r.bridge(t, []string{"--token-env", "AIRLOCK_TOKEN"}, "AIRLOCK_TOKEN="+named)
	p := r.askDelete(t, "claude-code", stdin, stdout)
	if p.Request.Context != "token:ci-bot" || p.Request.Client != "claude-code" {
		t.Errorf("the question is for context %q client %q, want token:ci-bot, claude-code", p.Request.Context, p.Request.Client)
	}
	if out := airlockIn(t, state, "", "gateway", "token", "revoke", "ci-bot", "--demo"); out.code != 0 {
		t.Fatalf("token revoke: exit %d\n%s%s", out.code, out.stdout, out.stderr)
	}
	r.withdrawn(t, "the revoked token", p, time.Now())
}

// goneCallRecords lists kind:decision:decided_by of the audit records of one call.
func goneCallRecords(t *testing.T, path, callID string) []string {
	t.Helper()
	var out []string
	for _, r := range auditRecords(t, path, func(r audit.Record) bool { return r.CallID == callID }) {
		out = append(out, r.Kind+":"+r.Decision+":"+r.DecidedBy)
	}
	return out
}

func goneText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
