package session_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session/demo"
)

// The test binary doubles as every stdio server the tests need: when
// AIRLOCK_TEST_SERVER is set it plays that server over its stdin and stdout instead
// of running tests. These are real subprocesses speaking MCP over real pipes.
const envServer = "AIRLOCK_TEST_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envServer); mode != "" {
		os.Exit(serve(mode))
	}
	os.Exit(m.Run())
}

func serve(mode string) int {
	ctx := context.Background()
	switch mode {
	case "demo-docs", "demo-web", "demo-notes", "demo-mail":
		if err := demo.ServeStdio(ctx, mode[len("demo-"):]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "hang-init":
		// Reads requests and never answers any: initialize never completes.
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
		}
		time.Sleep(time.Hour)
		return 0
	case "exit-at-once":
		fmt.Fprintln(os.Stderr, "fatal: cannot open database /nonexistent/db.sqlite")
		return 7
	case "grandchild":
		// Starts a long-lived child of its own, says its pid, then serves docs: closing
		// airlock must end the grandchild too.
		child := exec.Command("sleep", "300")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		_ = os.WriteFile(os.Getenv("AIRLOCK_TEST_PIDFILE"), []byte(strconv.Itoa(child.Process.Pid)), 0o600)
		if err := demo.ServeStdio(ctx, "docs"); err != nil {
			return 1
		}
		return 0
	case "crashy":
		// A server whose "crash" tool kills the process mid-call.
		s := mcp.NewServer(&mcp.Implementation{Name: "crashy", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "crash", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				fmt.Fprintln(os.Stderr, "panic: simulated crash")
				os.Exit(2)
				return nil, nil, nil
			})
		mcp.AddTool(s, &mcp.Tool{Name: "slow", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				<-ctx.Done() // answers only by being cancelled
				fmt.Fprintln(os.Stderr, "slow: cancelled by the client")
				return nil, nil, ctx.Err()
			})
		_ = s.Run(ctx, &mcp.StdioTransport{})
		return 0
	case "raw":
		return serveRaw(os.Getenv("AIRLOCK_TEST_RAW"))
	}
	fmt.Fprintf(os.Stderr, "unknown test server mode %q\n", mode)
	return 2
}

// rawScript is what the "raw" server answers, byte for byte: it lets a test send tool
// definitions go-sdk's server would never produce (absent hints, duplicates, repeated
// cursors).
type rawScript struct {
	Instructions string `json:"instructions"`
	// Pages are tools/list results in order; the last repeats when the client asks for more.
	Pages []json.RawMessage `json:"pages"`
	// ExitOnUnknown makes the server exit on any method it does not know, as some old
	// servers do on server/discover.
	ExitOnUnknown bool `json:"exit_on_unknown"`
}

func serveRaw(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var script rawScript
	if err := json.Unmarshal(b, &script); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	page := 0
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{
				"protocolVersion": "2025-06-18",
				"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
				"serverInfo":      map[string]any{"name": "raw", "version": "1"},
				"instructions":    script.Instructions,
			}
		case "tools/list":
			result = script.Pages[min(page, len(script.Pages)-1)]
			page++
		default:
			if script.ExitOnUnknown {
				fmt.Fprintf(os.Stderr, "unknown method %s: exiting\n", req.Method)
				return 3
			}
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", req.ID)
			out.Flush()
			continue
		}
		rb, _ := json.Marshal(result)
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, rb)
		out.Flush()
	}
	return 0
}
