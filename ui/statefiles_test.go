package ui

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/demo"
)

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
	set := demo.NewSet()
	inproc := map[string]*mcp.Server{}
	for _, n := range demo.Names() {
		inproc[n] = set.Server(n)
	}
	cfg := demo.Config()
	cfg.StateDir = state
	m := startWithOptions(t, cfg, session.Options{InProcess: inproc, RulesFile: rules, Now: func() time.Time { return fixedNow }})
	h := newHarnessFor(t, m, 160, 40, true, Options{Title: "demo"})
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
	set := demo.NewSet()
	inproc := map[string]*mcp.Server{}
	for _, n := range demo.Names() {
		inproc[n] = set.Server(n)
	}
	cfg := demo.Config()
	cfg.StateDir = state
	cfg.Limits.CallsPerMinute = 60
	m := startWithOptions(t, cfg, session.Options{InProcess: inproc, Now: func() time.Time { return fixedNow }})
	h := newHarnessFor(t, m, 160, 40, true, Options{Title: "demo"})
	h.waitFor("the red status", func(m Model) bool { return m.ratesProblem != nil })
	screenHas(t, h.plain(), "✖ rates.json unusable: calls under a rate limit ask")
}

// The notice of an unclean shutdown before this run is the status line's first word.
func TestStatusLine_StartNotice(t *testing.T) {
	m, _ := newDemo(t)
	h := newHarnessFor(t, m, 160, 40, false, Options{Title: "demo", Notice: "airlock (pid 42, started 2026-12-01 10:00:00) did not shut down cleanly"})
	screenHas(t, h.plain(), "airlock (pid 42, started 2026-12-01 10:00:00) did not shut down cleanly")
}
