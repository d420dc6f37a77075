package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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

// A stdio agent that runs the real `airlock bridge` and goes away while its call
// waits for a person, by closing the bridge's stdin or by the bridge being killed
// with it: the question is withdrawn at once, audited agent-gone, and the note is
// not deleted.
func TestBridgeProcess_AgentGoneWithdrawsItsQuestion(t *testing.T) {
	for _, how := range []string{"stdin closed", "bridge killed"} {
		t.Run(strings.ReplaceAll(how, " ", "_"), func(t *testing.T) {
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
			g, err := gateway.New(m, gateway.Options{Listen: "127.0.0.1:0", Token: token})
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Start(); err != nil {
				t.Fatal(err)
			}
			defer g.Close()

			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			addr := strings.TrimSuffix(strings.TrimPrefix(g.URL(), "http://"), "/mcp")
			bridge := exec.Command(self, "bridge", "--demo", "--gateway", addr)
			bridge.Env = append(os.Environ(), "AIRLOCK_AS_MAIN=1")
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
			// The agent's own end of the pipes, closed by hand: go-sdk's Close waits
			// for the call in flight before it closes the bridge's stdin.
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-agent", Version: "1"}, nil).
				Connect(context.Background(), &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
			if err != nil {
				t.Fatal(err)
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
			left := time.Now()
			if how == "bridge killed" {
				_ = bridge.Process.Kill()
			} else {
				_ = stdin.Close() // the agent's terminal closed
			}
			for len(m.Engine().Pending()) > 0 {
				if time.Since(left) > 10*time.Second {
					t.Fatalf("%s: the question still waits 10 s later", how)
				}
				time.Sleep(5 * time.Millisecond)
			}
			t.Logf("%s: question withdrawn %v after the agent left", how, time.Since(left).Round(time.Millisecond))
			if err := m.Engine().Answer(p.ID, session.Response{Answer: session.AllowOnce}); err == nil {
				t.Errorf("%s: the withdrawn question could still be allowed", how)
			}
			deadline := time.Now().Add(5 * time.Second)
			var kinds []string
			for time.Now().Before(deadline) {
				kinds = goneCallRecords(t, auditPath, p.CallID)
				if len(kinds) > 0 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
			kinds = goneCallRecords(t, auditPath, p.CallID)
			if len(kinds) != 1 || kinds[0] != "decision:deny:"+string(trust.DecidedByAgentGone) {
				t.Errorf("%s: audit of the call %v, want one deny decided_by agent-gone", how, kinds)
			}
			out, err := m.Call(context.Background(), session.CallRequest{Server: "notes", Tool: "list_notes"})
			if err != nil || !strings.Contains(goneText(out.Result), "note-1") {
				t.Errorf("%s: note-1 is gone after its agent left: %v", how, err)
			}
		})
	}
}

// goneCallRecords lists kind:decision:decided_by of the audit records of one call.
func goneCallRecords(t *testing.T, path, callID string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r audit.Record
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.CallID == callID {
			out = append(out, r.Kind+":"+r.Decision+":"+r.DecidedBy)
		}
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
