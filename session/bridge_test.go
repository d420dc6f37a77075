package session_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
)

// The bridge end to end: a stdio agent -> bridge -> gateway -> upstream demo servers,
// including an approval answered in airlock.
func TestBridgeEndToEnd(t *testing.T) {
	m, _ := demoInProcess(t, session.Options{})
	a := answerWith(t, m, session.Response{Answer: session.AllowOnce})
	g := startGateway(t, m)

	agentR, bridgeW := io.Pipe()
	bridgeR, agentW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- session.Bridge(ctx, g.URL(), testToken, bridgeR, bridgeW) }()

	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-agent", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: agentR, Writer: agentW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) < 7 {
		t.Fatalf("tools through the bridge: %v (%d)", err, len(res.Tools))
	}
	call, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes__create_note", Arguments: map[string]any{"title": "via bridge", "body": "b"}})
	if err != nil || call.IsError {
		t.Fatalf("call through the bridge: %v %s", err, textOf(call))
	}
	if p := <-a.seen; p.Request.Client != "stdio-agent" {
		t.Errorf("the dialog names client %q, want the stdio agent's own name", p.Request.Client)
	}
	cs.Close()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the bridge did not end")
	}
}
