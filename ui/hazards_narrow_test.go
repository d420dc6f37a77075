package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/internal/keytest"
)

// The hazards view at 60x20 of an untrusted server with server-everything's tool
// names, each claiming a closed world airlock does not believe: the reason that is
// true of every row is said once, with how many rows below it covers (it was
// repeated under each, three lines a tool), and the names keep their tool part
// whole (the trust column, cut to "? untru…" anyway, gives them its room).
func TestHazardsView_NarrowSaysASharedReasonOnce(t *testing.T) {
	names := []string{"echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference", "get-structured-content"}
	srv := mcp.NewServer(&mcp.Implementation{Name: "everything", Version: "1"}, nil)
	closed := false
	for _, n := range names {
		srv.AddTool(&mcp.Tool{Name: n, InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{OpenWorldHint: &closed}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	cfg := &config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute, Servers: []config.Server{
		{Name: "everything", Trust: trust.Untrusted, ConnectTimeout: 10 * time.Second, CallTimeout: time.Minute},
	}}
	sess := startManager(t, cfg, map[string]*mcp.Server{"everything": srv})
	h := newHarnessFor(t, sess, 60, 40, true, Options{SaveDir: t.TempDir()})
	h.keys("z")
	screen := h.plain()
	const reason = "server everything is untrusted, so it is assumed to read untrusted content"
	if n := strings.Count(keytest.Flat(screen), reason); n != 1 {
		t.Errorf("the shared reason is said %d times, want once:\n%s", n, screen)
	}
	screenHas(t, keytest.Flat(screen), "(so for the 5 below too)")
	for _, n := range names {
		if !strings.Contains(screen, "__"+n+" ") {
			t.Errorf("the tool part of everything__%s is cut:\n%s", n, screen)
		}
	}
	keytest.Fits(t, h.m.render(), 60, 40, "hazards")
}
