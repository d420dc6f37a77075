package ui

import (
	"context"
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// manyToolsSession is a Manager over one in-process server listing n tools as
// bench/manytools lists them (t0 … t9999, "Tool number N."), connected.
func manyToolsSession(tb testing.TB, n int) *session.Manager {
	tb.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "manytools", Version: "1"}, nil)
	for i := range n {
		srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%d", i), Description: fmt.Sprintf("Tool number %d.", i),
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	m := session.New(&config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute,
		Servers: []config.Server{{Name: "many", ConnectTimeout: time.Minute}}}, session.Options{InProcess: map[string]*mcp.Server{"many": srv}})
	tb.Cleanup(func() { m.Close() })
	m.Start()
	if err := m.Wait(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return m
}

// BenchmarkFirstScreen10000 is the UI's share of the first screen of bench/run's row
// 5e: a model at 120x40 given the first snapshot with 10,000 tools of one server,
// then drawn.
func BenchmarkFirstScreen10000(b *testing.B) {
	sess := manyToolsSession(b, 10000)
	snap := sess.Snapshot()
	if len(snap.Tools) != 10000 {
		b.Fatalf("%d tools", len(snap.Tools))
	}
	b.ReportAllocs()
	for b.Loop() {
		m := New(context.Background(), sess, Options{noPump: true, now: func() time.Time { return fixedNow }})
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		m.setSnapshot(snap)
		_ = m.View()
	}
}

// BenchmarkSetSnapshot10000 is the UI's share of a new snapshot at 10,000 tools over
// 50 servers: the panes, the hazards view, the banner.
func BenchmarkSetSnapshot10000(b *testing.B) {
	m := bigModel(b, 120, 40)
	snaps := [2]*model.Snapshot{bigSnapshot(), bigSnapshot()}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.setSnapshot(snaps[i%2])
		i++
	}
}
