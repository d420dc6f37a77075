package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// testServer is a stdio server played by this test binary in the given mode.
func testServer(t *testing.T, name, mode string, tr trust.ServerTrust) config.Server {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Under -race a child would otherwise sleep a second before it exits (the race
	// runtime's atexit_sleep_ms), and every Close waits for that.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	return config.Server{
		Name:           name,
		Transport:      config.TransportStdio,
		Command:        self,
		Env:            map[string]string{"AIRLOCK_TEST_SERVER": mode, "GORACE": gorace},
		ConnectTimeout: 20 * time.Second,
		CallTimeout:    20 * time.Second,
		Trust:          tr,
	}
}

// rawServer is a stdio server that answers with the given script byte for byte.
func rawServer(t *testing.T, name string, tr trust.ServerTrust, script string) config.Server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	s := testServer(t, name, "raw", tr)
	s.Env["AIRLOCK_TEST_RAW"] = path
	return s
}

func newConfig(servers ...config.Server) *config.Config {
	return &config.Config{
		Policy:          trust.DefaultPolicy(),
		ApprovalTimeout: time.Minute,
		Servers:         servers,
	}
}

// start builds a Manager, starts it, waits for every first attempt, and closes it
// when the test ends.
func start(t *testing.T, cfg *config.Config, opts session.Options) *session.Manager {
	t.Helper()
	m := session.New(cfg, opts)
	t.Cleanup(func() { m.Close() })
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatalf("waiting for servers: %v", err)
	}
	return m
}

func mustServer(t *testing.T, m *session.Manager, name string, want session.Status) session.ServerInfo {
	t.Helper()
	sv, ok := m.Snapshot().Server(name)
	if !ok {
		t.Fatalf("no server %q in snapshot", name)
	}
	if sv.Status != want {
		t.Fatalf("server %s is %v (err %v), want %v", name, sv.Status, sv.Err, want)
	}
	return sv
}

func mustTool(t *testing.T, m *session.Manager, server, tool string) session.ToolInfo {
	t.Helper()
	ti, ok := m.Snapshot().Tool(server, tool)
	if !ok {
		var names []string
		for _, x := range m.Snapshot().Tools {
			names = append(names, x.Ref.Qualified())
		}
		t.Fatalf("no tool %s__%s; have %s", server, tool, strings.Join(names, ", "))
	}
	return ti
}

func wantTier(t *testing.T, m *session.Manager, server, tool string, want trust.Tier) session.ToolInfo {
	t.Helper()
	ti := mustTool(t, m, server, tool)
	if ti.Class.Tier != want {
		t.Errorf("%s__%s tier = %v, want %v (reasons: %q)", server, tool, ti.Class.Tier, want, ti.Class.Reasons)
	}
	return ti
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// answerer answers every approval the Manager's queue raises with the answers given,
// in order, and records the pending calls it saw.
type answerer struct {
	seen chan *session.Pending
}

func answerWith(t *testing.T, m *session.Manager, answers ...session.Response) *answerer {
	t.Helper()
	a := &answerer{seen: make(chan *session.Pending, 16)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		i := 0
		for {
			ev, ok := m.Next(ctx)
			if !ok {
				return
			}
			req, ok := ev.(session.ApprovalRequested)
			if !ok {
				continue
			}
			a.seen <- req.Pending
			if i < len(answers) {
				_ = m.Engine().Answer(req.Pending.ID, answers[i])
				i++
			}
		}
	}()
	return a
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func args(s string) json.RawMessage { return json.RawMessage(s) }
