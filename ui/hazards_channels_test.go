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

// The hazards view of an untrusted server whose tool asks and whose resources and
// prompts run by the read tier's allow: the channels come first in their leg, each
// with its tier, its policy and what the server lists, never "not listed now" for
// a server that lists them; the tool row says that it asks.
func TestHazardsView_ChannelsShowTierPolicyAndWhatTheyList(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {60, 20}} {
		w, hh := size[0], size[1]
		h := exploreHarness(t, w, hh)
		h.keys("z")
		if h.m.screen != screenHazards {
			t.Fatalf("z opened screen %v", h.m.screen)
		}
		screen := h.plain()
		if strings.Contains(screen, "not listed now") {
			t.Errorf("%dx%d: a listed channel reads \"not listed now\":\n%s", w, hh, screen)
		}
		rows := map[string]string{}
		for _, l := range strings.Split(screen, "\n") {
			for _, name := range []string{"lib resources", "lib prompts", "lib__cover"} {
				row := strings.Join(strings.Fields(strings.Trim(l, "│ ▸")), " ")
				if strings.HasPrefix(row, name) && rows[name] == "" {
					rows[name] = row
				}
			}
		}
		for name, want := range map[string][]string{
			"lib resources": {"read", "allow", "3 resources"},
			"lib prompts":   {"read", "allow", "prompt"},
			"lib__cover":    {"destructive", "ask"},
		} {
			for _, wnt := range want {
				if !strings.Contains(rows[name], wnt) {
					t.Errorf("%dx%d: row of %s = %q, lacks %q", w, hh, name, rows[name], wnt)
				}
			}
		}
		if a, b := strings.Index(screen, "lib prompts"), strings.Index(screen, "lib__cover"); a < 0 || b < a {
			t.Errorf("%dx%d: the channels that run unasked are not listed before the tool that asks:\n%s", w, hh, screen)
		}
		keytest.Fits(t, h.m.render(), w, hh, "hazards")
		golden(t, "hazards_channels_"+itoa(w)+"x"+itoa(hh)+".golden", screen)
	}
}

// An untrusted server beside a store labelled persistent: the hazards view shows
// "untrusted content can persist", naming the store's write and not its read.
func TestHazardsView_UntrustedContentCanPersist(t *testing.T) {
	mem := mcp.NewServer(&mcp.Implementation{Name: "memory", Version: "1"}, nil)
	no, yes := false, true
	for _, tool := range []*mcp.Tool{
		{Name: "add_observations", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no}},
		{Name: "read_graph", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: yes, OpenWorldHint: &no}},
	} {
		mcp.AddTool(mem, tool, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	cfg := &config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute, Servers: []config.Server{
		{Name: "lib", Trust: trust.Untrusted, ConnectTimeout: 10 * time.Second, CallTimeout: time.Minute},
		{Name: "memory", Trust: trust.Trusted, Labels: []trust.Leg{trust.LegPersistent}, ConnectTimeout: 10 * time.Second, CallTimeout: time.Minute},
	}}
	sess := startManager(t, cfg, map[string]*mcp.Server{"lib": libServer(), "memory": mem})
	h := newHarnessFor(t, sess, 100, 70, false, Options{SaveDir: t.TempDir()})
	h.keys("z")
	screen := h.plain()
	screenHas(t, screen, "UNTRUSTED → PERSISTENT", "untrusted content can persist", "persistent · 1 tool", "memory__add_observations")
	if strings.Contains(screen, "memory__read_graph") {
		t.Errorf("the store's read is named in a hazard:\n%s", screen)
	}
}
