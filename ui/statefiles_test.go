package ui

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/demo"
)

// demoOnState is the demo's servers in process, with state dir state, the config
// changed by f (nil: as it is) and opts, shown at 160x40.
func demoOnState(t *testing.T, state string, f func(*config.Config), opts session.Options) *harness {
	t.Helper()
	set := demo.NewSet()
	opts.InProcess = map[string]*mcp.Server{}
	for _, n := range demo.Names() {
		opts.InProcess[n] = set.Server(n)
	}
	opts.Now = func() time.Time { return fixedNow }
	cfg := demo.Config()
	cfg.StateDir = state
	if f != nil {
		f(cfg)
	}
	return newHarnessFor(t, startWithOptions(t, cfg, opts), 160, 40, true, Options{Title: "demo"})
}

// A taint.json and a rules.toml airlock cannot read are red statuses, never
// "context clean": every context is treated as tainted (cleared only by the person,
// through the guarded question) and the tools of remembered rules ask.
func TestStatusLine_UnreadableStateFilesAreRed(t *testing.T) {
	state := t.TempDir()
	if err := os.Mkdir(filepath.Join(state, approval.TaintFile), 0o700); err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(t.TempDir(), approval.RulesFile)
	if err := os.WriteFile(rules, []byte("version = 1\n[[rules]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := demoOnState(t, state, nil, session.Options{RulesFile: rules})
	h.waitFor("the red statuses", func(m Model) bool { return m.rulesProblem != nil && m.taint.Tainted() })
	screenHas(t, h.plain(), "✖ taint.json unreadable: every context treated as tainted", "✖ rules.toml unreadable: remembered rules' tools ask")
	h.keys("w")
	h.keys("C")
	h.armQuestion()
	h.keys("right", "enter", "ctrl+y")
	h.waitFor("the taint to clear", func(m Model) bool { return !m.taint.Tainted() && !m.sess.Engine().Taint("").Tainted() })
	h.waitFor("the next event", func(m Model) bool { return m.taintProblem != nil })
	screenHas(t, h.plain(), "● context clean", "✖ taint.json unreadable: other contexts treated as tainted", "✖ rules.toml unreadable")
}

// A rates.json airlock cannot read is a red status: every call under a rate limit
// asks.
func TestStatusLine_UnreadableRatesFileIsRed(t *testing.T) {
	state := t.TempDir()
	if err := os.Mkdir(filepath.Join(state, approval.RatesFile), 0o700); err != nil {
		t.Fatal(err)
	}
	h := demoOnState(t, state, func(c *config.Config) { c.Limits.CallsPerMinute = 60 }, session.Options{})
	h.waitFor("the red status", func(m Model) bool { return m.ratesProblem != nil })
	screenHas(t, h.plain(), "✖ rates.json unusable: calls under a rate limit ask")
}

// The notice of an unclean shutdown before this run is the status line's first word.
func TestStatusLine_StartNotice(t *testing.T) {
	m, _ := newDemo(t)
	h := newHarnessFor(t, m, 160, 40, false, Options{Title: "demo", Notice: "airlock (pid 42, started 2026-12-01 10:00:00) did not shut down cleanly"})
	screenHas(t, h.plain(), "airlock (pid 42, started 2026-12-01 10:00:00) did not shut down cleanly")
}
