package session_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// whatIfTools builds a Manager over 50 in-process servers with 200 tools each (10,000
// tools), annotated in a realistic mix.
func whatIfTools(b *testing.B) *session.Manager {
	b.Helper()
	m, _ := whatIfToolset(b)
	return m
}

// whatIfToolset is whatIfTools with the in-process servers, by name.
func whatIfToolset(b *testing.B) (*session.Manager, map[string]*mcp.Server) {
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
	m := session.New(sessiontest.NewConfig(servers...), session.Options{InProcess: inproc})
	b.Cleanup(func() { m.Close() })
	m.Start()
	if err := m.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	if n := len(m.Snapshot().Tools); n != 10000 {
		b.Fatalf("%d tools, want 10000", n)
	}
	return m, inproc
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

// BenchmarkRelistOneServer is one server of fifty changing a tool's description (a
// tools/list_changed and a re-listing of its 200 tools) at 10,000 tools; build-µs is
// the Snapshot call that built the new snapshot: what a changed server costs the
// whole toolset (reclassification and hazards), apart from the protocol round trip.
func BenchmarkRelistOneServer(b *testing.B) {
	m, servers := whatIfToolset(b)
	srv := servers["s07"]
	var builds []time.Duration
	i := 0
	for b.Loop() {
		i++
		desc := fmt.Sprintf("Tool 0 of server s07, version %d: reads records; see also tool_001.", i)
		srv.AddTool(&mcp.Tool{Name: "tool_000", Description: desc,
			InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
		deadline := time.Now().Add(10 * time.Second)
		for {
			start := time.Now()
			s := m.Snapshot()
			took := time.Since(start)
			if t, ok := s.Tool("s07", "tool_000"); ok && t.Description == desc {
				builds = append(builds, took)
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("the re-listing never arrived")
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
	slices.Sort(builds)
	b.ReportMetric(float64(builds[len(builds)/2].Microseconds()), "build-µs")
}
