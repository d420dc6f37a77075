// Command bareproxy is the floor under airlock's gateway in bench/run's peer rows: a
// plain go-sdk server on streamable HTTP whose one tool, docs__get_doc, forwards to
// get_doc of a stdio server through a go-sdk client, and nothing else (no token,
// allowlists, approval engine, audit log or snapshot). It is
// session's BenchmarkCallThroughBareProxy as a process, with the stdio upstream that
// airlock and supergateway are given. It prints its URL and serves until killed.
//
//	bareproxy COMMAND [ARGS...]
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bareproxy COMMAND [ARGS...]")
		os.Exit(2)
	}
	ctx := context.Background()
	up, err := mcp.NewClient(&mcp.Implementation{Name: "bareproxy", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: exec.Command(os.Args[1], os.Args[2:]...)}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer up.Close()
	proxy := mcp.NewServer(&mcp.Implementation{Name: "bareproxy", Version: "1"}, nil)
	proxy.AddTool(&mcp.Tool{Name: "docs__get_doc", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return up.CallTool(ctx, &mcp.CallToolParams{Name: "get_doc", Arguments: req.Params.Arguments})
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return proxy }, nil)
	fmt.Fprintln(os.Stderr, http.Serve(ln, h))
	os.Exit(1)
}
