package gateway_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/conn"
	"github.com/airlock-mcp/airlock/session/gateway"
)

// The bridge end to end: a stdio agent -> bridge -> gateway -> upstream demo servers,
// including an approval answered in airlock.
func TestBridgeEndToEnd(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	a := sessiontest.AnswerWith(t, m) // sees; the test answers
	g := startGateway(t, m)

	agentR, bridgeW := io.Pipe()
	bridgeR, agentW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- gateway.Bridge(ctx, gateway.Link{Client: conn.OriginBoundClient, MaxMessageBytes: conn.MaxMessageBytes}, g.URL(), testToken, bridgeR, bridgeW)
	}()

	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-agent", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: agentR, Writer: agentW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) < 7 {
		t.Fatalf("tools through the bridge: %v (%d)", err, len(res.Tools))
	}
	// A call waiting for a person does not hold up the agent's other calls.
	waiting := make(chan error, 1)
	go func() {
		call, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes__create_note", Arguments: map[string]any{"title": "via bridge", "body": "b"}})
		if err == nil && call.IsError {
			err = errors.New(sessiontest.TextOf(call))
		}
		waiting <- err
	}()
	p := <-a.Seen
	if p.Request.Client != "stdio-agent" {
		t.Errorf("the dialog names client %q, want the stdio agent's own name", p.Request.Client)
	}
	quick, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "docs__search_docs", Arguments: map[string]any{"query": "tier"}})
	if err != nil || quick.IsError {
		t.Fatalf("second call while the first waits: %v", err)
	}
	if err := m.Engine().Answer(p.ID, model.Response{Answer: model.AllowOnce}); err != nil {
		t.Fatal(err)
	}
	if err := <-waiting; err != nil {
		t.Fatalf("call through the bridge: %v", err)
	}
	cs.Close()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the bridge did not end")
	}
}
