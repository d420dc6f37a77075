package session_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// whatIfTools builds a Manager over 50 in-process servers with 200 tools each (10,000
// tools), annotated in a realistic mix.
func whatIfTools(b *testing.B) *session.Manager {
	b.Helper()
	inproc := map[string]*mcp.Server{}
	var servers []config.Server
	for i := range 50 {
		name := fmt.Sprintf("s%02d", i)
		srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
		for j := range 200 {
			ro, open := j%3 == 0, j%5 == 0
			srv.AddTool(&mcp.Tool{
				Name:        fmt.Sprintf("tool_%03d", j),
				Description: fmt.Sprintf("Tool %d of server %s: reads or writes records; see also tool_%03d for the batch form.", j, name, (j+1)%200),
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}},
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ro, OpenWorldHint: &open},
			}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		}
		inproc[name] = srv
		s := config.Server{Name: name, Trust: trust.Trusted}
		if i%7 == 0 {
			s.Labels = []trust.Leg{trust.LegPrivateData}
		}
		servers = append(servers, s)
	}
	m := session.New(newConfig(servers...), session.Options{InProcess: inproc})
	b.Cleanup(func() { m.Close() })
	m.Start()
	if err := m.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	if n := len(m.Snapshot().Tools); n != 10000 {
		b.Fatalf("%d tools, want 10000", n)
	}
	return m
}

// BenchmarkWhatIfRecompute is one live change at 10,000 tools: toggle a server's trust
// and take the new snapshot (every tool reclassified, hazards recomputed).
func BenchmarkWhatIfRecompute(b *testing.B) {
	m := whatIfTools(b)
	flip := []trust.ServerTrust{trust.Untrusted, trust.Trusted}
	i := 0
	for b.Loop() {
		if err := m.SetServerTrust("s07", flip[i%2]); err != nil {
			b.Fatal(err)
		}
		if s := m.Snapshot(); len(s.Tools) != 10000 {
			b.Fatal("lost tools")
		}
		i++
	}
}
