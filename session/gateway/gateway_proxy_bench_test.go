package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallThroughBareProxy is the floor under BenchmarkCallThroughGateway: the
// same call through a plain go-sdk server whose tool forwards to the upstream with a
// go-sdk client. Two streamable HTTP hops and nothing else (no token, allowlists,
// approval engine or snapshot), so the gateway's figure minus this one is airlock's
// own cost, and this one minus BenchmarkCallDirect is the second hop's.
func BenchmarkCallThroughBareProxy(b *testing.B) {
	benchCalls(b, dialBareProxy(b, upstreamDocs(b), "docs", "get_doc"), "docs__get_doc")
}

// dialBareProxy connects an agent to a new bare proxy of the streamable HTTP server
// at url, serving its tool as server__tool; all closed when b ends.
func dialBareProxy(b *testing.B, url, server, tool string) *mcp.ClientSession {
	ctx := context.Background()
	up, err := mcp.NewClient(&mcp.Implementation{Name: "proxy", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = up.Close() })
	proxy := mcp.NewServer(&mcp.Implementation{Name: "proxy", Version: "1"}, nil)
	proxy.AddTool(&mcp.Tool{Name: server + "__" + tool, InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return up.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: req.Params.Arguments})
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return proxy }, nil))
	b.Cleanup(srv.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}
