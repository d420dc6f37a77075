package session_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// A server's elicitation request reaches the person as an event, and the answer goes
// back to the server as the tool's input.
func TestElicitationRoundTrip(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask_name", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
				Message: "Your name?",
				RequestedSchema: map[string]any{
					"type":       "object",
					"properties": map[string]any{"name": map[string]any{"type": "string"}},
					"required":   []string{"name"},
				},
			})
			if err != nil {
				return nil, nil, err
			}
			name, _ := res.Content["name"].(string)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action + ":" + name}}}, nil, nil
		})
	m := sessiontest.Start(t, sessiontest.NewConfig(config.Server{Name: "asker", Trust: trust.Trusted}), session.Options{InProcess: map[string]*mcp.Server{"asker": srv}})
	go func() {
		for {
			ev, ok := m.Next(context.Background())
			if !ok {
				return
			}
			if e, ok := ev.(model.ElicitationRequested); ok {
				if e.Elicitation.Message != "Your name?" || e.Elicitation.Server != "asker" || e.Elicitation.Mode != "form" {
					t.Errorf("elicitation = %+v", e.Elicitation)
				}
				_ = m.AnswerElicitation(e.Elicitation.ID, "accept", map[string]any{"name": "Ada"})
			}
		}
	}()
	out, err := m.Call(context.Background(), model.CallRequest{Server: "asker", Tool: "ask_name"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sessiontest.TextOf(out.Result); got != "accept:Ada" {
		t.Errorf("tool saw %q, want accept:Ada", got)
	}
	if err := m.AnswerElicitation(999, "accept", nil); err == nil {
		t.Error("answering an unknown elicitation succeeded")
	}
}
