package session_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
)

// relayUpstream is an in-process server with resources, a template, prompts and a
// tool that returns a resource link; two of them (alpha, beta) collide on every URI
// and name, and say which they are in every text they return.
func relayUpstream(name string) *upstream {
	u := &upstream{got: map[string][]json.RawMessage{}}
	u.srv = mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	u.srv.AddTool(&mcp.Tool{Name: "find", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: hint(false)}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: name + " found one"},
				&mcp.ResourceLink{URI: "test://same/readme", Name: "readme"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://same/my notes", Text: name + " notes"}},
			}}, nil
		})
	return u
}

// Issue 13 relay: resource links and embedded resources in a tool result reach the
// agent as relay URIs of the server that returned them.
func TestRelay_ToolResultLinksAreRelayURIs(t *testing.T) {
	ups := map[string]*upstream{"alpha": relayUpstream("alpha"), "beta": relayUpstream("beta")}
	m := startUpstreams(t, newConfig(inproc("alpha", trust.Trusted), inproc("beta", trust.Trusted)), session.Options{}, ups)
	g := startGateway(t, m)
	cs := agent(t, g, nil)
	for _, server := range []string{"alpha", "beta"} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: server + "__find", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("%s__find: %v %s", server, err, resultText(res))
		}
		link, ok1 := res.Content[1].(*mcp.ResourceLink)
		emb, ok2 := res.Content[2].(*mcp.EmbeddedResource)
		if !ok1 || !ok2 {
			t.Fatalf("%s__find content %#v", server, res.Content)
		}
		if want := "airlock://" + server + "/test://same/readme"; link.URI != want {
			t.Errorf("%s link URI %q, want %q", server, link.URI, want)
		}
		if want := "airlock://" + server + "?test://same/my%20notes"; emb.Resource.URI != want {
			t.Errorf("%s embedded URI %q, want %q", server, emb.Resource.URI, want)
		}
	}
}
