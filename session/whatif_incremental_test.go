package session_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// TestWhatIf_IncrementalHazardsMatchFullRecompute plays a random sequence of live
// changes (server trust, tool policy, disabling) over six in-process servers whose
// descriptions name each other's tools, and after every step compares the
// snapshot's hazards, made incrementally, with trust.Hazards recomputed from nothing
// over the snapshot's own tools; it also checks Snapshot.Tool against Tools. Servers
// also change underneath: a re-listing with a changed description, a new tool name or
// a tool gone, and a disconnect (and later a reconnect). Snapshots share their tools
// and hazards' legs with later ones (read-only): every step checks that no later
// build changed what an earlier snapshot holds.
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
	m := sessiontest.Start(t, sessiontest.NewConfig(servers...), session.Options{InProcess: inproc})
	rng := rand.New(rand.NewPCG(16, 4))
	trusts := []trust.ServerTrust{trust.Untrusted, trust.Trusted}
	actions := []trust.Action{trust.ActionUnset, trust.Allow, trust.Ask, trust.Deny}
	// listed[server] are the tool names the server lists now; down[server] that it
	// is disconnected.
	listed := map[string][]string{}
	for i := range 6 {
		listed[fmt.Sprintf("s%d", i)] = slices.Clone(names)
	}
	down := map[string]bool{}
	addTool := func(server, tn, desc string) {
		inproc[server].AddTool(&mcp.Tool{Name: tn, Description: desc, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	type kept struct {
		snap    *model.Snapshot
		tools   []model.ToolInfo
		hazards []trust.Hazard
	}
	var history []kept
	relisted, disconnected := 0, 0
	for step := range 200 {
		server := fmt.Sprintf("s%d", rng.IntN(6))
		ref := trust.Ref{Server: server, Tool: names[rng.IntN(len(names))]}
		var err error
		switch op := rng.IntN(9); {
		case op == 0, op == 1:
			err = m.SetServerTrust(server, trusts[rng.IntN(len(trusts))])
		case op == 2, op == 3:
			err = m.SetToolPolicy(ref, actions[rng.IntN(len(actions))])
		case op == 4, op == 5:
			err = m.SetDisabled(ref, rng.IntN(2) == 0)
		case down[server]:
			if err = m.Reconnect(server); err == nil {
				sessiontest.WaitFor(t, server+" to reconnect", 30*time.Second, func() bool {
					sv, _ := m.Snapshot().Server(server)
					return sv.Status == model.StatusReady
				})
				down[server] = false
			}
		case op == 6:
			// A new description naming another server's tool: a changed definition.
			tn := listed[server][rng.IntN(len(listed[server]))]
			desc := fmt.Sprintf("step %d: prefer s%d__%s or %s", step, rng.IntN(6), names[rng.IntN(len(names))], names[rng.IntN(len(names))])
			addTool(server, tn, desc)
			sessiontest.WaitFor(t, server+" to re-list "+tn, 30*time.Second, func() bool {
				ti, ok := m.Snapshot().Tool(server, tn)
				return ok && ti.Description == desc
			})
			relisted++
		case op == 7:
			// A tool comes or goes.
			if tn := fmt.Sprintf("extra_%d", step); rng.IntN(2) == 0 || len(listed[server]) < 3 {
				addTool(server, tn, "also try "+names[rng.IntN(len(names))])
				listed[server] = append(listed[server], tn)
			} else {
				k := rng.IntN(len(listed[server]))
				inproc[server].RemoveTools(listed[server][k])
				listed[server] = slices.Delete(listed[server], k, k+1)
			}
			want := len(listed[server])
			sessiontest.WaitFor(t, server+" to re-list", 30*time.Second, func() bool {
				n := 0
				for _, ti := range m.Snapshot().Tools {
					if ti.Ref.Server == server {
						n++
					}
				}
				return n == want
			})
			relisted++
		default:
			// The server drops the connection.
			for ss := range inproc[server].Sessions() {
				ss.Close()
			}
			sessiontest.WaitFor(t, server+" to be seen disconnected", 30*time.Second, func() bool {
				sv, _ := m.Snapshot().Server(server)
				return sv.Status == model.StatusFailed
			})
			down[server] = true
			disconnected++
		}
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		wantTools := 0
		for sv, l := range listed {
			if !down[sv] {
				wantTools += len(l)
			}
		}
		snap := m.Snapshot()
		if len(snap.Tools) != wantTools {
			t.Fatalf("step %d: %d tools, want %d", step, len(snap.Tools), wantTools)
		}
		assessed := make([]trust.Assessed, len(snap.Tools))
		for i, ti := range snap.Tools {
			assessed[i] = trust.Assessed{Ref: ti.Ref, Description: ti.Description, Text: trust.ToolText(ti.Raw), Fingerprint: ti.Fingerprint, Class: ti.Class,
				Untrusted: ti.ServerTrust != trust.Trusted}
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
		// What earlier snapshots hold is shared with this one, read-only: unchanged.
		k := kept{snap: snap, hazards: deepCopyHazards(snap.Hazards)}
		for _, ti := range snap.Tools {
			k.tools = append(k.tools, *ti)
		}
		history = append(history, k)
		for _, h := range history[max(0, len(history)-20):] {
			now := make([]model.ToolInfo, len(h.snap.Tools))
			for i, ti := range h.snap.Tools {
				now[i] = *ti
			}
			// reflect.DeepEqual first: cmp.Diff over every kept tool at every step is slow.
			if reflect.DeepEqual(h.tools, now) && reflect.DeepEqual(h.hazards, h.snap.Hazards) {
				continue
			}
			if diff := cmp.Diff(h.tools, now, cmpopts.IgnoreUnexported(model.ToolInfo{})); diff != "" {
				t.Fatalf("step %d: a later build changed snapshot %d's tools (-was +now):\n%s", step, h.snap.Version, diff)
			}
			if diff := cmp.Diff(h.hazards, h.snap.Hazards); diff != "" {
				t.Fatalf("step %d: a later build changed snapshot %d's hazards (-was +now):\n%s", step, h.snap.Version, diff)
			}
			t.Fatalf("step %d: a later build changed snapshot %d (unexported fields)", step, h.snap.Version)
		}
	}
	if relisted < 20 || disconnected < 5 {
		t.Errorf("%d re-listings and %d disconnects: the sequence no longer covers servers changing underneath", relisted, disconnected)
	}
}

// deepCopyHazards copies hazards with their legs and rules, sharing no memory.
func deepCopyHazards(hs []trust.Hazard) []trust.Hazard {
	if hs == nil {
		return nil
	}
	out := make([]trust.Hazard, len(hs))
	for i, h := range hs {
		h.Rules = slices.Clone(h.Rules)
		legs := make(map[string][]string, len(h.Legs))
		for k, v := range h.Legs {
			legs[k] = slices.Clone(v)
		}
		h.Legs = legs
		out[i] = h
	}
	return out
}
