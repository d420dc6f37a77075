package session_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// probeArgs is what the fence prober is told to try.
type probeArgs struct {
	// Op is open, write, dial, run, fd, ptrace or signal.
	Op      string   `json:"op"`
	Path    string   `json:"path,omitempty"`
	Network string   `json:"network,omitempty"`
	Address string   `json:"address,omitempty"`
	Args    []string `json:"args,omitempty"`
	N       int      `json:"n,omitempty"`
}

// serveProber is a stdio server with one read-only tool "probe" that tries what it
// is told, as given (no checks of its own), and answers "ok" or the error: what a
// server under a fence can and cannot do.
func serveProber(ctx context.Context) int {
	s := mcp.NewServer(&mcp.Implementation{Name: "prober", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "probe", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a probeArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: probe(a)}}}, nil, nil
		})
	_ = s.Run(ctx, &mcp.StdioTransport{})
	return 0
}

func probe(a probeArgs) string {
	result := func(err error) string {
		if err != nil {
			return "error: " + err.Error()
		}
		return "ok"
	}
	switch a.Op {
	case "open":
		f, err := os.Open(a.Path)
		if err == nil {
			_, err = f.Read(make([]byte, 1))
			f.Close()
		}
		return result(err)
	case "cat":
		b, err := os.ReadFile(a.Path)
		if err != nil {
			return result(err)
		}
		return "ok: " + string(b)
	case "write":
		f, err := os.OpenFile(a.Path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err == nil {
			_, err = f.Write([]byte("x"))
			f.Close()
		}
		return result(err)
	case "dial":
		c, err := net.DialTimeout(a.Network, a.Address, 5*time.Second)
		if err == nil {
			_, err = c.Write([]byte("hello"))
			if err == nil && strings.HasPrefix(a.Network, "udp") {
				// A datagram to a port nobody reads is only refused on the next
				// read; the test's listener answers, so read the answer.
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				_, err = c.Read(make([]byte, 16))
			}
			c.Close()
		}
		return result(err)
	case "run":
		out, err := exec.Command(a.Path, a.Args...).CombinedOutput()
		if err != nil {
			return fmt.Sprintf("error: %v: %s", err, out)
		}
		return "ok: " + string(out)
	case "fd":
		f := os.NewFile(uintptr(a.N), "inherited")
		_, err := f.Read(make([]byte, 1))
		return result(err)
	case "ptrace":
		return result(ptraceAttach(a.N))
	case "signal":
		return result(signalZero(a.N))
	}
	return "error: unknown op " + a.Op
}
