package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
)

// A tool that declares an output schema gets its results checked by Manager.Call,
// for agents and the person alike: structured content that does not match, or none
// at all, is ErrResultSchema naming the path and what was expected, audited as
// outcome "result-invalid" and reported so in the CallFinished event; a valid result
// passes unchanged; a tool error (isError) passes as it is, unchecked.
func TestCall_ChecksResultAgainstOutputSchema(t *testing.T) {
	shop := sessiontest.NewUpstream("shop")
	shop.AddStructured("quote", sessiontest.PriceSchema, `{"price":"12"}`)
	shop.AddStructured("bare", sessiontest.PriceSchema, "")
	shop.AddStructured("good", sessiontest.PriceSchema, `{"price":12.5}`)
	shop.Srv.AddTool(&mcp.Tool{Name: "broken", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(sessiontest.PriceSchema),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: sessiontest.Hint(false)}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the price list is gone"}}}, nil
		})
	log, path := sessiontest.OpenAuditLog(t)
	m := sessiontest.StartUpstreams(t, sessiontest.NewConfig(sessiontest.Inproc("shop", trust.Trusted)), session.Options{Audit: log},
		map[string]*sessiontest.Upstream{"shop": shop})
	evs := sessiontest.CollectEvents(t, m)
	ctx := context.Background()

	for _, tc := range []struct{ context, tool, want string }{
		{"agent-r", "quote", "the server's result does not match its output schema: price: expected number, got string"},
		{"", "quote", "the server's result does not match its output schema: price: expected number, got string"},
		{"agent-r", "bare", "the server's result does not match its output schema: the tool declares an output schema but returned no structured content"},
	} {
		out, err := m.Call(ctx, model.CallRequest{Context: tc.context, Server: "shop", Tool: tc.tool})
		if !errors.Is(err, session.ErrResultSchema) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s by %q: %v, want ErrResultSchema saying %q", tc.tool, tc.context, err, tc.want)
			continue
		}
		if out == nil || out.Result == nil {
			t.Errorf("%s by %q: no outcome beside the error: the result screen has nothing to show", tc.tool, tc.context)
		}
		f := finishedOf(t, evs, tc.context, tc.tool)
		if f.Outcome != "result-invalid" || !strings.Contains(f.Err, tc.want) {
			t.Errorf("%s by %q: the CallFinished event says %s: %q", tc.tool, tc.context, f.Outcome, f.Err)
		}
	}
	var outcomes []string
	for _, r := range sessiontest.AuditRecords(t, path) {
		if r.Kind == "outcome" && (r.Tool == "quote" || r.Tool == "bare") {
			outcomes = append(outcomes, r.Outcome)
			if !strings.Contains(r.Error, "does not match its output schema") {
				t.Errorf("the outcome record of %s says %q, want the mismatch", r.Tool, r.Error)
			}
		}
	}
	if strings.Join(outcomes, " ") != "result-invalid result-invalid result-invalid" {
		t.Errorf("the outcome records are %q, want three result-invalid", outcomes)
	}

	out, err := m.Call(ctx, model.CallRequest{Context: "agent-r", Server: "shop", Tool: "good"})
	if err != nil {
		t.Fatalf("a valid result: %v", err)
	}
	if b, _ := json.Marshal(out.Result.StructuredContent); string(b) != `{"price":12.5}` {
		t.Errorf("a valid result's structured content is %s, want it unchanged", b)
	}

	out, err = m.Call(ctx, model.CallRequest{Context: "agent-r", Server: "shop", Tool: "broken"})
	if err != nil || !out.Result.IsError || out.Result.StructuredContent != nil {
		t.Errorf("a tool error under an output schema: %v, %+v; want it passed as it is", err, out)
	}
}

// A result is checked against the output schema of the tool the call was decided
// on, not a laxer one the server lists while the call runs: quote's handler
// redefines quote with an output schema that allows anything, waits until the
// Manager holds that listing, then answers {"price":"12"}, which only the new
// schema allows.
func TestCall_ChecksTheSchemaTheCallWasDecidedOn(t *testing.T) {
	const lax = `{"type":"object"}`
	shop := sessiontest.NewUpstream("shop")
	var m *session.Manager
	quote := &mcp.Tool{Name: "quote", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(sessiontest.PriceSchema),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: sessiontest.Hint(false)}}
	answer := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "12"}}, StructuredContent: json.RawMessage(`{"price":"12"}`)}, nil
	}
	shop.Srv.AddTool(quote, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		laxer := *quote
		laxer.OutputSchema = json.RawMessage(lax)
		shop.Srv.AddTool(&laxer, answer) // go-sdk says tools/list_changed
		sessiontest.WaitFor(t, "the Manager to list quote's laxer output schema", 10*time.Second, func() bool {
			ti, ok := m.Snapshot().Tool("shop", "quote")
			return ok && string(ti.OutputSchema) == lax
		})
		return answer(ctx, req)
	})
	m = sessiontest.StartUpstreams(t, sessiontest.NewConfig(sessiontest.Inproc("shop", trust.Trusted)), session.Options{},
		map[string]*sessiontest.Upstream{"shop": shop})

	_, err := m.Call(context.Background(), model.CallRequest{Context: "agent-r", Server: "shop", Tool: "quote"})
	if !errors.Is(err, session.ErrResultSchema) || !strings.Contains(err.Error(), "price: expected number, got string") {
		t.Errorf("a result checked after the tool's schema became laxer: %v, want ErrResultSchema under the schema decided on", err)
	}
}
