package gateway_test

// `airlock gateway rotate-token` ends the old default token's sessions, withdraws
// their waiting questions and runs nothing of their calls, like a revoke.

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session/gateway"
)

func TestAgentIdentity_RotateTokenEndsOldSessions(t *testing.T) {
	mail, m, evs, _ := tokenSetup(t)
	dir := t.TempDir()
	tok, err := gateway.RotateToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(m, gateway.Options{Listen: "127.0.0.1:0", Token: tok, TokenFile: gateway.TokenPath(dir), TokensFile: gateway.TokensPath(dir), WaitingEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "thief", Version: "1"}, nil)
	a, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.URL(),
		HTTPClient: &http.Client{Transport: sessiontest.HeaderRT{Headers: map[string]string{"Authorization": "Bearer " + tok}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := a.CallTool(context.Background(), &mcp.CallToolParams{Name: "mail__send_email", Arguments: map[string]any{"to": "x"}})
		done <- res
	}()
	p := evs.Pending(t, 1)
	if _, err := gateway.RotateToken(dir); err != nil {
		t.Fatal(err)
	}
	sessiontest.WaitFor(t, "the old default token's question to be withdrawn after rotate-token", 10*time.Second, func() bool {
		return !waitingQuestion(m, p.ID)
	})
	_ = m.Engine().Answer(p.ID, model.Response{Answer: model.AllowOnce})
	if res := <-done; res != nil && !res.IsError {
		t.Errorf("the old default token's call ran after rotate-token; its result went to the old holder")
	}
	if n := len(mail.Calls("send_email")); n != 0 {
		t.Errorf("send_email ran %d times", n)
	}
	sessiontest.WaitFor(t, "the rotated-away token's session to close", 10*time.Second, func() bool { return g.OpenSessions() == 0 })
}
