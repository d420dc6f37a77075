package session_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// BenchmarkConnectAndList10000 is the session's share of "10,000 tools on screen":
// a Manager connecting one in-process server that lists 10,000 tools (each with a
// small input schema), up to the first snapshot. The server side (go-sdk encoding the
// pages) is in the figure too and did not change.
func BenchmarkConnectAndList10000(b *testing.B) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1"}, nil)
	for i := range 10000 {
		srv.AddTool(&mcp.Tool{
			Name:        fmt.Sprintf("tool_%05d", i),
			Description: fmt.Sprintf("Reads record %d of the archive and returns it as text.", i),
			InputSchema: &jsonschema.Schema{
				Type: "object",
				Properties: map[string]*jsonschema.Schema{
					"id":    {Type: "string", Description: "the record's id"},
					"limit": {Type: "integer", Description: "how many lines"},
				},
				Required: []string{"id"},
			},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	cfg := &config.Config{
		Policy:          trust.DefaultPolicy(),
		ApprovalTimeout: time.Minute,
		Servers:         []config.Server{{Name: "many", Transport: config.TransportStdio, Command: "unused", ConnectTimeout: time.Minute, Trust: trust.Untrusted}},
	}
	b.ReportAllocs()
	for b.Loop() {
		m := session.New(cfg, session.Options{InProcess: map[string]*mcp.Server{"many": srv}})
		m.Start()
		if err := m.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		if snap := m.Snapshot(); len(snap.Tools) != 10000 {
			b.Fatalf("%d tools listed", len(snap.Tools))
		}
		m.Close()
	}
}
