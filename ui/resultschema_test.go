package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/screens/activity"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// The Activity's record of a call whose result did not match the tool's output
// schema says so with the session's error, beside what the server sent, and never
// as a valid result.
func TestActivity_ResultInvalidShowsTheError(t *testing.T) {
	st := theme.New(true, true)
	const why = "calling shop__quote: the server's result does not match its output schema: price: expected number, got string"
	call := model.CallFinished{
		CallID: "c3", Client: "agent", Context: "token:default", Server: "shop", Tool: "quote", Tier: "read",
		Args: []byte(`{}`), Decision: "allow", DecidedBy: string(trust.DecidedByPolicy), Outcome: "result-invalid", Err: why, At: time.Now(),
		Result: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "quote ran"}}, StructuredContent: map[string]any{"price": "12"}},
	}
	e := activity.Entry{At: call.At, Call: call}
	got := strings.Join(strings.Fields(ansi.Strip(e.RecordContent(&st, 100))), " ")
	for _, want := range []string{"✗ result invalid", "✗ RESULT INVALID", "quote ran", `"price": "12"`, "✗ does NOT match the tool's output schema", "its output schema: price: expected number"} {
		if !strings.Contains(got, want) {
			t.Errorf("the record lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "✓") {
		t.Errorf("the record reads as valid somewhere:\n%s", got)
	}
}

// The person's call of a tool whose result does not match its output schema ends on
// the result screen with the session's error and a status line that says so, never
// as a call that returned.
func TestCall_ResultInvalidSaysSo(t *testing.T) {
	_, m, h := badQuote(t)
	tool := sessiontest.MustTool(t, m, "shop", "quote")
	out, err := m.Call(context.Background(), model.CallRequest{Server: "shop", Tool: "quote"})
	h.m.call.Begin(h.m.call.Gen+1, tool, nil, fixedNow, func() {})
	h.m.callDone(callDoneMsg{gen: h.m.call.Gen, outcome: out, err: err})
	if !strings.Contains(h.m.status, "does not match its output schema") {
		t.Errorf("the status line says %q", h.m.status)
	}
	got := strings.Join(strings.Fields(ansi.Strip(h.m.result.VP.View())), " ")
	if !strings.Contains(got, "✗ RESULT INVALID") || strings.Contains(got, "✓") {
		t.Errorf("the result screen:\n%s", got)
	}
}

// The result screen's verdict on structured content is the Manager's check, made
// against the tool the call was decided on, not the tool the person opened the call
// on: here the server drops quote's output schema after the form was opened, the
// person accepts the new definition, and the call's {"price":"12"} is checked
// against nothing. The screen must not say it matches the schema the form showed.
func TestCall_ResultScreenSaysOnlyWhatTheManagerChecked(t *testing.T) {
	shop, m, h := badQuote(t)
	opened := sessiontest.MustTool(t, m, "shop", "quote")
	shop.AddStructured("quote", "null", `{"price":"12"}`)
	sessiontest.WaitFor(t, "the listing without quote's output schema", 10*time.Second, func() bool {
		ti, ok := m.Snapshot().Tool("shop", "quote")
		return ok && string(ti.OutputSchema) == "null"
	})
	now := sessiontest.MustTool(t, m, "shop", "quote")
	if _, err := m.AcceptPins("shop", model.Reviewed{Tools: map[string]string{"quote": now.Fingerprint}}); err != nil {
		t.Fatal(err)
	}
	out, err := m.Call(context.Background(), model.CallRequest{Server: "shop", Tool: "quote"})
	if err != nil {
		t.Fatalf("the call under the accepted definition: %v", err)
	}
	h.m.call.Begin(h.m.call.Gen+1, opened, nil, fixedNow, func() {})
	h.m.callDone(callDoneMsg{gen: h.m.call.Gen, outcome: out, err: err})
	got := strings.Join(strings.Fields(ansi.Strip(h.m.result.VP.View())), " ")
	if strings.Contains(got, "matches the tool's output schema") {
		t.Errorf("the result screen says an unchecked result matches:\n%s", got)
	}
}

// badQuote is a trusted in-process server, shop, whose quote declares a numeric
// price and returns {"price":"12"}, with the TUI open on it at 100x30.
func badQuote(t *testing.T) (*sessiontest.Upstream, *session.Manager, *harness) {
	t.Helper()
	shop := sessiontest.NewUpstream("shop")
	shop.AddStructured("quote", sessiontest.PriceSchema, `{"price":"12"}`)
	m := sessiontest.StartUpstreams(t, sessiontest.NewConfig(sessiontest.Inproc("shop", trust.Trusted)), session.Options{},
		map[string]*sessiontest.Upstream{"shop": shop})
	return shop, m, newHarnessFor(t, m, 100, 30, false, Options{Title: "shop"})
}
