package session_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
)

// Ping reaches the server and measures its answer; the ping is in the history both
// ways. A server that is not connected is not pinged.
func TestPingMeasuresTheServer(t *testing.T) {
	u := echoUpstream()
	cfg := sessiontest.NewConfig(sessiontest.Inproc("hist", trust.Trusted))
	m := sessiontest.StartUpstreams(t, cfg, session.Options{}, map[string]*sessiontest.Upstream{"hist": u})
	sessiontest.MustServer(t, m, "hist", model.StatusReady)
	d, err := m.Ping(context.Background(), "hist")
	if err != nil || d <= 0 || d > 5*time.Second {
		t.Fatalf("Ping = %v, %v", d, err)
	}
	h := m.History("hist")
	if !historyHas(h, true, "request", "ping") || !historyHas(h, false, "response", "ping") {
		t.Errorf("the ping is not in the history: %s", historyList(h))
	}
	if _, err := m.Ping(context.Background(), "nosuch"); err == nil {
		t.Error("pinged a server that does not exist")
	}
}

// SetLogLevel sends logging/setLevel to a server that declares logging, after which
// its log messages arrive (in the history and as log lines); a server without the
// capability, or a level that is none, is refused without a message.
func TestSetLogLevelThenMessagesArrive(t *testing.T) {
	u := echoUpstream()
	u.Srv = mcp.NewServer(&mcp.Implementation{Name: "hist", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Logging: &mcp.LoggingCapabilities{}}, //lint:ignore SA1019 tested as servers still declare it
	})
	u.Add("echo", "Echo.", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: sessiontest.Hint(false)})
	u.During["echo"] = func(ctx context.Context, req *mcp.CallToolRequest) {
		//lint:ignore SA1019 servers before protocol 2026-07-28 still log this way
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Data: "disk almost full"})
	}
	plain := echoUpstream()
	cfg := sessiontest.NewConfig(sessiontest.Inproc("hist", trust.Trusted), sessiontest.Inproc("plain", trust.Trusted))
	m := sessiontest.StartUpstreams(t, cfg, session.Options{}, map[string]*sessiontest.Upstream{"hist": u, "plain": plain})
	sessiontest.MustServer(t, m, "hist", model.StatusReady)
	sessiontest.MustServer(t, m, "plain", model.StatusReady)
	ev := sessiontest.CollectEvents(t, m)
	if err := m.SetLogLevel(context.Background(), "hist", "loud"); err == nil {
		t.Error("a level that is none was sent")
	}
	if err := m.SetLogLevel(context.Background(), "plain", "debug"); err == nil || !strings.Contains(err.Error(), "no logging") {
		t.Errorf("a server without logging: %v", err)
	}
	if err := m.SetLogLevel(context.Background(), "hist", "info"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Call(context.Background(), model.CallRequest{Server: "hist", Tool: "echo"}); err != nil {
		t.Fatal(err)
	}
	ev.Wait(t, "the server's log line", 5*time.Second, func(e model.Event) bool {
		l, ok := e.(model.LogLine)
		return ok && l.Server == "hist" && strings.Contains(l.Text, "disk almost full")
	})
	h := m.History("hist")
	if !historyHas(h, true, "request", "logging/setLevel") || !historyHas(h, false, "notification", "notifications/message") {
		t.Errorf("history: %s", historyList(h))
	}
}
