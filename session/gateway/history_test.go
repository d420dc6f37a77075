package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
)

// An agent session's exchange with the gateway is kept as its own protocol history,
// both ways, with methods, named as the dialog names the agent; its end keeps it as
// ended.
func TestAgentSessionHistory(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	g := startGateway(t, m)
	cs, err := dialGateway(t, g, testToken, "history-agent", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docs__search_docs", Arguments: map[string]any{"query": "tier"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %s", err, resultText(res))
	}
	srcs := m.AgentHistorySources()
	if len(srcs) != 1 {
		t.Fatalf("agent sessions with a history: %+v, want one", srcs)
	}
	if want := "session 1 · history-agent · token:default"; srcs[0].Label != want || srcs[0].Ended {
		t.Errorf("the session's label %q (ended %v), want %q", srcs[0].Label, srcs[0].Ended, want)
	}
	h := m.AgentHistory(srcs[0].Key)
	seen := map[string]bool{}
	for _, e := range h.Messages {
		seen[arrowOf(e)+" "+e.Kind+" "+e.Method] = true
	}
	for _, want := range []string{
		"← request initialize", "→ response initialize", "← notification notifications/initialized",
		"← request tools/call", "→ response tools/call",
	} {
		if !seen[want] {
			t.Errorf("the agent's history has no %q; it has %v", want, seen)
		}
	}
	for _, e := range h.Messages {
		if e.Method == "tools/call" && !e.Out && !strings.Contains(string(e.Raw), `"query":"tier"`) {
			t.Errorf("the call as kept: %s", e.Raw)
		}
	}
	cs.Close()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && !m.AgentHistory(srcs[0].Key).Ended {
		time.Sleep(20 * time.Millisecond)
	}
	if h := m.AgentHistory(srcs[0].Key); !h.Ended || len(h.Messages) == 0 {
		t.Errorf("after the agent left: ended %v, %d messages kept", h.Ended, len(h.Messages))
	}
}

func arrowOf(e model.HistoryMessage) string {
	if e.Out {
		return "→"
	}
	return "←"
}
