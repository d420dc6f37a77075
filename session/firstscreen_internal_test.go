package session

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/internal/testhooks"
	"github.com/airlock-mcp/airlock/session/pins"
	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

// manyToolsManager is a started Manager over one in-process server "many" listing n
// tools named as bench/manytools names them (t0, t1, … t9999: listed in number
// order, not in name order), with opts; it is closed when the test ends.
func manyToolsManager(tb testing.TB, n int, opts Options) *Manager {
	tb.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1"}, nil)
	for i := range n {
		srv.AddTool(&mcp.Tool{
			Name:        fmt.Sprintf("t%d", i),
			Description: fmt.Sprintf("Writes record %d of the archive.", i),
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}},
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	opts.InProcess = map[string]*mcp.Server{"many": srv}
	m := New(&config.Config{
		Policy:          trust.DefaultPolicy(),
		ApprovalTimeout: time.Minute,
		Servers:         []config.Server{{Name: "many", Trust: trust.Trusted, ConnectTimeout: time.Minute}},
	}, opts)
	tb.Cleanup(func() { m.Close() })
	m.Start()
	if err := m.Wait(context.Background()); err != nil {
		tb.Fatal(err)
	}
	if got := len(m.Snapshot().Tools); got != n {
		tb.Fatalf("%d tools listed, want %d", got, n)
	}
	return m
}

// rebuild drops every cached part (and the hazards' shadowing) and takes a snapshot built from scratch, as the
// first one after a listing is.
func (m *Manager) rebuild() *model.Snapshot {
	for _, s := range m.servers {
		s.mu.Lock()
		s.snapCache = nil
		s.mu.Unlock()
	}
	m.buildMu.Lock()
	m.built = builtState{}
	m.buildMu.Unlock()
	m.dropSnapshot()
	return m.Snapshot()
}

// (the path to the first screen): building a snapshot of a listing
// looks at rules.toml once, not once per tool (10,000 lstat calls were about half of
// the first build), and still sees the remembered allow rules as the file stands.
func TestSnapshot_RulesFileLookedAtOncePerBuild(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.toml")
	m := manyToolsManager(t, 300, Options{RulesFile: path})
	writeT7AllowRule(t, path)
	var looks atomic.Int32
	testhooks.RulesLook = func(p string) {
		if p == path {
			looks.Add(1)
		}
	}
	t.Cleanup(func() { testhooks.RulesLook = nil })

	m.rebuild()

	testhooks.RulesLook = nil
	if looks := looks.Load(); looks > 1 {
		t.Errorf("one snapshot of 300 tools looked at rules.toml %d times, want once", looks)
	}
	part := m.servers["many"].snapCache
	allowed := 0
	for _, a := range part.assessed {
		if a.AllowRule != "" {
			allowed++
			if a.Ref.Tool != "t7" {
				t.Errorf("%s has the allow rule %q", a.Ref.Tool, a.AllowRule)
			}
		}
	}
	if allowed != 1 {
		t.Errorf("%d tools have an allow rule, want t7's written before the build", allowed)
	}
}

// writeT7AllowRule writes a rules.toml at path that holds one remembered rule: t7 of
// the server "many" is allowed for paths under /srv.
func writeT7AllowRule(tb testing.TB, path string) {
	tb.Helper()
	const rules = "version = 1\ncount = 1\nrules = [{ id = \"r1\", server = \"many\", tool = \"t7\", policy = \"allow\", " +
		"from = \"a test\", created = 1970-01-01T00:00:01Z, when = { path = { glob = \"/srv/*\" } } }]\n"
	if err := statefile.WriteFile(path, []byte(rules)); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkFirstSnapshot10000 is the first snapshot after a listing of 10,000 tools
// (rules.toml in place, as the TUI runs): every tool classified, hazards over the set.
func BenchmarkFirstSnapshot10000(b *testing.B) {
	path := filepath.Join(b.TempDir(), "rules.toml")
	writeT7AllowRule(b, path)
	m := manyToolsManager(b, 10000, Options{RulesFile: path})
	b.ReportAllocs()
	for b.Loop() {
		if s := m.rebuild(); len(s.Tools) != 10000 {
			b.Fatal("lost tools")
		}
	}
}

// BenchmarkBuildServer10000 is one server's part of that first snapshot alone (10,000
// tools listed as bench/manytools lists them, not in name order).
func BenchmarkBuildServer10000(b *testing.B) {
	m := manyToolsManager(b, 10000, Options{})
	s := m.servers["many"]
	key := s.snapCache.key
	b.ReportAllocs()
	for b.Loop() {
		s.mu.Lock()
		part := m.buildServer(s, key)
		s.mu.Unlock()
		if len(part.tools) != 10000 {
			b.Fatal("lost tools")
		}
	}
}

// Resources and prompts listed after the tools (or changed later)
// change the server's channels, not its tools: the tools are not classified again
// (a second pass over 10,000 tools right after the first screen), and the channels
// and hazards follow the new catalog.
func TestSnapshot_CatalogChangeKeepsTheClassifiedTools(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1"}, nil)
	for i := range 50 {
		srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%d", i), Description: "a tool", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	srv.AddResource(&mcp.Resource{URI: "file:///a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	m := New(&config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute,
		Servers: []config.Server{{Name: "many", ConnectTimeout: time.Minute}}}, Options{InProcess: map[string]*mcp.Server{"many": srv}})
	t.Cleanup(func() { m.Close() })
	m.Start()
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := m.Snapshot()
	if sv, _ := before.Server("many"); len(sv.Resources) != 1 || len(before.Tools) != 50 {
		t.Fatalf("before: %d resources, %d tools", len(sv.Resources), len(before.Tools))
	}
	srv.AddResource(&mcp.Resource{URI: "file:///b", Name: "b"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	deadline := time.Now().Add(10 * time.Second)
	var after *model.Snapshot
	for {
		after = m.Snapshot()
		if sv, _ := after.Server("many"); len(sv.Resources) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the new resource never showed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := range after.Tools {
		if after.Tools[i] != before.Tools[i] {
			t.Fatalf("tool %s was classified again for a catalog change", after.Tools[i].Ref.Tool)
		}
	}
	if len(after.Channels) == 0 {
		t.Error("the server's resources fill no channel")
	}
	part := m.servers["many"].snapCache
	if got, want := len(part.assessed), len(part.tools)+len(part.channels); got != want {
		t.Errorf("the hazards read %d entries, want the %d tools and %d channels", got, len(part.tools), len(part.channels))
	}
}

// TestPins_WrittenOnceTheListingIsShown: a first listing's pins are written after the
// snapshot showing it is built, not beside it: on two cores the megabytes of a
// 10,000-tool pins file, written at once, made the first screen wait (bench/analysis.md).
// The pins are decided before either, and a call still waits for the write.
func TestPins_WrittenOnceTheListingIsShown(t *testing.T) {
	const n = 300
	srv := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1"}, nil)
	for i := range n {
		srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%d", i), InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	pins, err := pins.Open(filepath.Join(t.TempDir(), "pins.json"))
	if err != nil {
		t.Fatal(err)
	}
	m := New(&config.Config{
		Policy:          trust.DefaultPolicy(),
		ApprovalTimeout: time.Minute,
		Servers:         []config.Server{{Name: "many", Trust: trust.Trusted, ConnectTimeout: time.Minute}},
	}, Options{InProcess: map[string]*mcp.Server{"many": srv}, Pins: pins})
	t.Cleanup(func() { m.Close() })
	var writes, shownFirst atomic.Int32
	testhooks.PinsSave = func() error {
		writes.Add(1)
		// The server's part of the snapshot (kept while later events, such as
		// its resources arriving, drop the snapshot itself).
		s := m.servers["many"]
		s.mu.Lock()
		part := s.snapCache
		s.mu.Unlock()
		if part != nil && len(part.tools) == n {
			shownFirst.Add(1)
		}
		return nil
	}
	t.Cleanup(func() { testhooks.PinsSave = nil })
	m.Start()
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	m.pins.WaitSaved()
	if writes.Load() != 1 || shownFirst.Load() != 1 {
		t.Fatalf("%d pins writes, %d of them after the snapshot with the listing was built; want 1 and 1", writes.Load(), shownFirst.Load())
	}
}

// TestCatalog_UnchangedCatalogKeepsTheSnapshot: a server without resources or prompts
// stores, after its tools, the same empty catalog its capabilities declared; that
// changed nothing and must not drop the snapshot just built for its tools (at 10,000
// tools the first screen waited for a second build, hazards included).
func TestCatalog_UnchangedCatalogKeepsTheSnapshot(t *testing.T) {
	m := manyToolsManager(t, 50, Options{})
	s := m.servers["many"]
	s.mu.Lock()
	gen, c := s.gen, s.catalog
	s.mu.Unlock()
	before := m.Snapshot()
	s.setCatalog(gen, c)
	if m.Snapshot() != before {
		t.Fatal("storing the same catalog again dropped the snapshot")
	}
	c.offersPrompts, c.prompts = true, []model.PromptInfo{{Name: "p"}}
	s.setCatalog(gen, c)
	if after := m.Snapshot(); after == before || len(after.Servers[0].Prompts) != 1 {
		t.Fatal("a changed catalog did not reach the snapshot")
	}
}

// TestBuildServer_SplitListingClassifiedAsOne: a listing long enough to be classified
// over the processors gives every tool the classification it has alone, the tier
// counts of all of them, and the hazards' entries in listing order.
func TestBuildServer_SplitListingClassifiedAsOne(t *testing.T) {
	n := 3*parallelBuildMin + 7
	m := manyToolsManager(t, n, Options{})
	if err := m.SetToolPolicy(trust.Ref{Server: "many", Tool: "t5"}, trust.Deny); err != nil {
		t.Fatal(err)
	}
	snap := m.Snapshot()
	var tiers [len(trust.Tiers)]int
	for _, ti := range snap.Tools {
		if got := trust.Classify(ti.Input(), m.cfg.Policy); !reflect.DeepEqual(got, ti.Class) {
			t.Fatalf("%s: classified %+v in the split build, %+v alone", ti.Ref.Tool, ti.Class, got)
		}
		tiers[ti.Class.Tier]++
	}
	if sv := snap.Servers[0]; sv.Tiers != tiers {
		t.Fatalf("tier counts %v, the tools' own %v", sv.Tiers, tiers)
	}
	s := m.servers["many"]
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.snapCache.assessed) != n {
		t.Fatalf("%d entries for the hazards, want %d", len(s.snapCache.assessed), n)
	}
	for i, a := range s.snapCache.assessed {
		if a.Ref.Tool != s.tools[i].wire.Name || a.Fingerprint != s.tools[i].fingerprint {
			t.Fatalf("hazards entry %d is %s, the listing's %s", i, a.Ref.Tool, s.tools[i].wire.Name)
		}
	}
}

// What a tool's entry says of its server is one value shared by the
// server's tools (it was four slices copied into each of 10,000 entries), and it
// still says it: the labels classification read, as Input gives them back.
func TestSnapshot_ToolsShareTheirServerFacts(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1"}, nil)
	for i := range 3 {
		srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%d", i), InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	m := New(&config.Config{
		Policy:          trust.DefaultPolicy(),
		ApprovalTimeout: time.Minute,
		Servers:         []config.Server{{Name: "many", Trust: trust.Trusted, ConnectTimeout: time.Minute, Labels: []trust.Leg{trust.LegPrivateData}}},
	}, Options{InProcess: map[string]*mcp.Server{"many": srv}})
	defer m.Close()
	m.Start()
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	tools := m.Snapshot().Tools
	if len(tools) != 3 {
		t.Fatalf("%d tools, want 3", len(tools))
	}
	for _, ti := range tools {
		if ti.Facts == nil || ti.Facts != tools[0].Facts {
			t.Fatalf("%s: facts %p, want the one value %p of its server", ti.Ref.Tool, ti.Facts, tools[0].Facts)
		}
		if got := ti.Input().ServerLabels; !slices.Equal(got, []trust.Leg{trust.LegPrivateData}) {
			t.Errorf("%s: Input().ServerLabels = %v, want the config's [private-data]", ti.Ref.Tool, got)
		}
		if !ti.Class.Has(trust.LegPrivateData) {
			t.Errorf("%s: legs %v, want private-data from the server's label", ti.Ref.Tool, ti.Class.Legs)
		}
	}
	var none model.ToolInfo
	if none.ServerEnv() != nil || none.ServerRoots() != nil || none.ServerDeprecated() != nil || none.ServerLabels() != nil {
		t.Error("a ToolInfo without facts should read as nothing known")
	}
}
