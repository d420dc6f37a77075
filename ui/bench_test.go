package ui

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// bigSnapshot is a session of 50 servers with 200 tools each, classified like real
// ones (every tier, every leg, hazards over the whole set), built without servers.
func bigSnapshot() *model.Snapshot {
	const servers, perServer = 50, 200
	snap := &model.Snapshot{Version: 1}
	var assessed []trust.Assessed
	for s := range servers {
		name := fmt.Sprintf("srv%02d", s)
		info := model.ServerInfo{Name: name, Trust: trust.ServerTrust(s % 2), Status: model.StatusReady, Gen: 1, Protocol: "2025-11-25"}
		for i := range perServer {
			tier := trust.Tier((s + i) % len(trust.Tiers))
			eff := trust.Effective{ReadOnly: tier == trust.TierRead, Destructive: tier >= trust.TierDestructive, OpenWorld: i%3 == 0, Idempotent: i%2 == 0}
			var legs []trust.Leg
			if eff.OpenWorld {
				legs = append(legs, trust.LegUntrustedContent)
				if !eff.ReadOnly {
					legs = append(legs, trust.LegExfiltration)
				}
			}
			if s%7 == 0 {
				legs = append(legs, trust.LegPrivateData)
			}
			action := trust.Ask
			if tier == trust.TierRead {
				action = trust.Allow
			}
			class := trust.Classification{Tier: tier, Effective: eff, Legs: legs, Action: action,
				Reasons: []string{"server " + name + " is trusted: its annotations are taken as declared", "tier " + tier.String() + ": policy " + action.String()}}
			ref := trust.Ref{Server: name, Tool: fmt.Sprintf("tool_%03d", i)}
			desc := fmt.Sprintf("Tool number %d of server %s. It does one thing and reports what it did, in a sentence long enough to be cut.", i, name)
			snap.Tools = append(snap.Tools, &model.ToolInfo{Ref: ref, Description: desc, Class: class, ServerTrust: info.Trust, Exposed: true,
				InputSchema: []byte(`{"type":"object","properties":{"q":{"type":"string"}}}`)})
			info.Tiers[tier]++
			assessed = append(assessed, trust.Assessed{Ref: ref, Description: desc, Class: class})
		}
		snap.Servers = append(snap.Servers, info)
	}
	snap.Hazards = trust.Hazards(assessed)
	return snap
}

// bigModel is the root model over bigSnapshot at a window size. Its Manager has no
// servers: the snapshot is handed to the model directly.
func bigModel(b testing.TB, w, h int) Model {
	sess := session.New(&config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute}, session.Options{})
	b.Cleanup(func() { sess.Close() })
	m := New(context.Background(), sess, Options{NoColor: false, noPump: true, now: func() time.Time { return fixedNow }})
	m.setSnapshot(bigSnapshot())
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// BenchmarkView measures one frame and one key press over 10,000 tools. The budget
// is 4 ms a frame and 1 ms a key press. Speed is measured here, in benchmarks, and
// never in timed tests.
func BenchmarkView(b *testing.B) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		m := bigModel(b, size[0], size[1])
		b.Run(fmt.Sprintf("frame/%dx%d", size[0], size[1]), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
		b.Run(fmt.Sprintf("down/%dx%d", size[0], size[1]), func(b *testing.B) {
			b.ReportAllocs()
			down := keyPress("down")
			mm := m
			for b.Loop() {
				mm.Update(down)
				if mm.tools.Cursor >= len(mm.tools.Rows)-1 {
					mm.tools.Cursor = 0
				}
			}
		})
		b.Run(fmt.Sprintf("down+frame/%dx%d", size[0], size[1]), func(b *testing.B) {
			b.ReportAllocs()
			down := keyPress("down")
			mm := m
			for b.Loop() {
				mm.Update(down)
				_ = mm.View()
			}
		})
		b.Run(fmt.Sprintf("tier-filter/%dx%d", size[0], size[1]), func(b *testing.B) {
			b.ReportAllocs()
			tkey := keyPress("t")
			mm := m
			for b.Loop() {
				mm.Update(tkey)
			}
		})
	}
}

// TestKeyPress_TheModelStaysWhereItIs: bubbletea holds the root model as a tea.Model;
// a value model (114 kB, most of it lipgloss styles held by value) was copied to the
// heap on every message, before the first screen a dozen times, and then at every
// key press and call event. The root model is a pointer: a key press over 10,000
// tools allocates a few kilobytes.
func TestKeyPress_TheModelStaysWhereItIs(t *testing.T) {
	m := bigModel(t, 120, 40)
	down := keyPress("down")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const presses = 50
	for range presses {
		nm, _ := m.Update(down)
		if nm != &m {
			t.Fatal("Update returned another model than the one bubbletea holds")
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / presses; per > 48<<10 {
		t.Fatalf("a key press allocated %d bytes, want under 48 kB (the model is %d bytes)", per, unsafe.Sizeof(m))
	}
}
