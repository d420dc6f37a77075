package session_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// TestWhatIf_IncrementalHazardsMatchFullRecompute plays a random sequence of live
// changes (server trust, tool policy, disabling) over six in-process servers whose
// descriptions name each other's tools, and after every step compares the
// snapshot's hazards, made incrementally, with trust.Hazards recomputed from nothing
// over the snapshot's own tools; it also checks Snapshot.Tool against Tools.
func TestWhatIf_IncrementalHazardsMatchFullRecompute(t *testing.T) {
	inproc := map[string]*mcp.Server{}
	var servers []config.Server
	names := []string{"send_email", "fetch_url", "read_notes", "list_files", "delete_page"}
	for i := range 6 {
		name := fmt.Sprintf("s%d", i)
		srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
		for j, tn := range names {
			ro, open := j%2 == 0, j%3 == 0
			srv.AddTool(&mcp.Tool{
				Name:        tn,
				Description: fmt.Sprintf("%s on %s; before it, call %s or s%d__%s.", tn, name, names[(j+1)%len(names)], (i+1)%6, names[(j+2)%len(names)]),
				InputSchema: map[string]any{"type": "object"},
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ro, OpenWorldHint: &open, DestructiveHint: new(j == 4)},
			}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		}
		inproc[name] = srv
		s := config.Server{Name: name, Trust: trust.ServerTrust(i % 2)}
		if i%2 == 0 {
			s.Labels = []trust.Leg{trust.LegPrivateData}
		}
		servers = append(servers, s)
	}
	m := start(t, newConfig(servers...), session.Options{InProcess: inproc})
	rng := rand.New(rand.NewPCG(16, 4))
	trusts := []trust.ServerTrust{trust.Untrusted, trust.Trusted}
	actions := []trust.Action{trust.ActionUnset, trust.Allow, trust.Ask, trust.Deny}
	for step := range 200 {
		server := fmt.Sprintf("s%d", rng.IntN(6))
		ref := trust.Ref{Server: server, Tool: names[rng.IntN(len(names))]}
		var err error
		switch rng.IntN(3) {
		case 0:
			err = m.SetServerTrust(server, trusts[rng.IntN(len(trusts))])
		case 1:
			err = m.SetToolPolicy(ref, actions[rng.IntN(len(actions))])
		case 2:
			err = m.SetDisabled(ref, rng.IntN(2) == 0)
		}
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		snap := m.Snapshot()
		if len(snap.Tools) != 30 {
			t.Fatalf("step %d: %d tools, want 30", step, len(snap.Tools))
		}
		assessed := make([]trust.Assessed, len(snap.Tools))
		for i, ti := range snap.Tools {
			assessed[i] = trust.Assessed{Ref: ti.Ref, Description: ti.Description, Text: trust.ToolText(ti.Raw), Fingerprint: ti.Fingerprint, Class: ti.Class}
			if got, ok := snap.Tool(ti.Ref.Server, ti.Ref.Tool); !ok || got.Ref != ti.Ref {
				t.Fatalf("step %d: Snapshot.Tool(%v) = %v, %v", step, ti.Ref, got.Ref, ok)
			}
		}
		if _, ok := snap.Tool("s9", "send_email"); ok {
			t.Fatalf("step %d: Snapshot.Tool found a tool of a server that does not exist", step)
		}
		if diff := cmp.Diff(trust.Hazards(assessed), snap.Hazards); diff != "" {
			t.Fatalf("step %d: the snapshot's hazards differ from a full recompute (-want +got):\n%s", step, diff)
		}
	}
}
