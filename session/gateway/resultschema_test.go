package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/trust"
)

// resultSchemaGateway is a gateway serving shop's three tools that declare the
// output schema {price: number}: quote answers {"price":"12"}, bare no structured
// content, good {"price":12.5}. It returns the audit log's path.
func resultSchemaGateway(t *testing.T) (*gateway.Gateway, string) {
	t.Helper()
	shop := sessiontest.NewUpstream("shop")
	shop.AddStructured("quote", sessiontest.PriceSchema, `{"price":"12"}`)
	shop.AddStructured("bare", sessiontest.PriceSchema, "")
	shop.AddStructured("good", sessiontest.PriceSchema, `{"price":12.5}`)
	log, path := sessiontest.OpenAuditLog(t)
	m := sessiontest.StartUpstreams(t, sessiontest.NewConfig(sessiontest.Inproc("shop", trust.Trusted)), session.Options{Audit: log},
		map[string]*sessiontest.Upstream{"shop": shop})
	return startGateway(t, m), path
}

const resultMismatch = "the server's result does not match its output schema: price: expected number, got string"

// An agent never gets a structured result its tool's output schema does not allow:
// it gets a tool error (isError, no structured content) saying where and what was
// expected, which the model reads as the call's failure; the outcome is audited as
// result-invalid. A valid result reaches it unchanged.
func TestGateway_ResultCheckedAgainstOutputSchema(t *testing.T) {
	g, path := resultSchemaGateway(t)
	cs := agent(t, g, nil)
	ctx := context.Background()
	for _, tc := range []struct{ tool, want string }{
		{"shop__quote", resultMismatch},
		{"shop__bare", "the server's result does not match its output schema: the tool declares an output schema but returned no structured content"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool})
		want := "airlock withheld the tool's result: calling " + tc.tool + ": " + tc.want
		if err != nil || !res.IsError || res.StructuredContent != nil || !strings.Contains(resultText(res), want) {
			t.Errorf("%s: %v, %+v (%q); want a tool error without structured content saying %q", tc.tool, err, res, resultText(res), want)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shop__good"})
	if err != nil || res.IsError {
		t.Fatalf("a valid result: %v, %q", err, resultText(res))
	}
	if b, _ := json.Marshal(res.StructuredContent); string(b) != `{"price":12.5}` {
		t.Errorf("a valid result's structured content reached the agent as %s, want it unchanged", b)
	}
	n := 0
	for _, r := range sessiontest.AuditRecords(t, path) {
		if r.Kind == "outcome" && r.Tool != "good" {
			n++
			if r.Outcome != "result-invalid" || r.Context != "token:default" {
				t.Errorf("the outcome record of %s in %s is %q", r.Tool, r.Context, r.Outcome)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d outcome records of the two mismatched results", n)
	}
}

// The TypeScript SDK's client checks structured content itself when a tool declares
// an output schema, and refuses a success without it: the gateway's tool error is
// what it hands the model (bench/agent/agent.mjs reports a tool error), and a valid
// result passes its own check.
func TestGateway_ResultSchemaTypeScriptAgent(t *testing.T) {
	g, _ := resultSchemaGateway(t)
	run := func(tool string) string {
		// -c 1 lists the tools before the call, so the SDK knows the output schema.
		out, _ := typeScriptAgent(t, g, "-tool", tool, "-args", "{}", "-c", "1", "-d", "0ms").CombinedOutput()
		return string(out)
	}
	if out := run("shop__quote"); !strings.Contains(out, `"error":"tool error: `) || !strings.Contains(out, resultMismatch) {
		t.Errorf("the TypeScript agent's mismatched call: %s; want the gateway's tool error", out)
	}
	if out := run("shop__good"); strings.Contains(out, `"error"`) || !strings.Contains(out, `"calls"`) {
		t.Errorf("the TypeScript agent's valid call: %s", out)
	}
}

// What the Manager checks is what the agent is given: go-sdk decodes a result's
// structured content once (a key twice keeps the last, a number is a float64), the
// Manager checks that value and the gateway encodes that same value for the agent,
// never the server's bytes. So a duplicate key cannot hide an unchecked value from
// an agent, and a number rounded on the way in reaches the agent as checked. A
// number beyond float64 fails the whole call. A tool error (isError) is not
// checked and is relayed with its structured content: the MCP spec asks conforming
// structured content of a tool that succeeded only, and the agent's SDK is told the
// call failed (the TypeScript SDK's client skips its own check of it too).
func TestGateway_ResultGivenIsTheResultChecked(t *testing.T) {
	const tool = `{"name":"quote","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"price":{"type":"number","maximum":9007199254740992}},"required":["price"]},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`
	results := map[string]string{
		"lastnum": `{"content":[],"structuredContent":{"price":"12","price":12}}`,
		"laststr": `{"content":[],"structuredContent":{"price":12,"price":"12"}}`,
		"rounded": `{"content":[],"structuredContent":{"price":9007199254740993}}`,
		"beyond":  `{"content":[],"structuredContent":{"price":1e400}}`,
		"failed":  `{"content":[{"type":"text","text":"no price today"}],"isError":true,"structuredContent":{"price":"12"}}`,
	}
	var servers []config.Server
	for name, res := range results {
		servers = append(servers, sessiontest.RawServer(t, name, trust.Trusted, sessiontest.Script(sessiontest.Page(tool), `"result":`+res)))
	}
	m := sessiontest.Start(t, sessiontest.NewConfig(servers...), session.Options{})
	cs := agent(t, startGateway(t, m), nil)
	for _, tc := range []struct{ server, structured, text string }{
		{"lastnum", `{"price":12}`, ""},
		{"laststr", "", "airlock withheld the tool's result: calling laststr__quote: " + resultMismatch},
		{"rounded", `{"price":9007199254740992}`, ""},
		{"beyond", "", "airlock could not complete this call: "},
		{"failed", `{"price":"12"}`, "no price today"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.server + "__quote"})
		if err != nil {
			t.Errorf("%s: %v", tc.server, err)
			continue
		}
		got := ""
		if res.StructuredContent != nil {
			b, _ := json.Marshal(res.StructuredContent)
			got = string(b)
		}
		if got != tc.structured || !strings.Contains(resultText(res), tc.text) || res.IsError != (tc.text != "") {
			t.Errorf("%s: the agent got %s (isError %v, %q), want %s (%q)", tc.server, got, res.IsError, resultText(res), tc.structured, tc.text)
		}
	}
}
