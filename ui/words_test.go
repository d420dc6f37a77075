package ui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/question"
	"github.com/airlock-mcp/airlock/ui/screens/hazards"
	"github.com/airlock-mcp/airlock/ui/screens/helpview"
)

// "guarded" means one thing everywhere, and ? explains the
// words a newcomer meets first.
func TestWords_GuardedOneMeaningAndGlossaryInHelp(t *testing.T) {
	h := newHarness(t, 200, 50, false)
	screen := h.plain()
	screenHas(t, screen, "guarded (at least one leg asks a person before it runs)")
	if strings.Contains(screen, "you are asked before a leg runs") {
		t.Error("the banner still says the false sentence")
	}
	h.keys("?")
	help := strings.Join(strings.Fields(ansi.Strip(h.m.overlay.VP.GetContent())), " ")
	for _, g := range helpview.Glossary {
		if !strings.Contains(help, g[0]) || !strings.Contains(help, strings.Join(strings.Fields(g[1]), " ")) {
			t.Errorf("help lacks the word %q: %q", g[0], g[1])
		}
	}
	screenHas(t, help, strings.TrimPrefix(trust.GuardedMeaning, "guarded: "))
	// At 80 columns every definition is wrapped, never cut.
	h80 := newHarness(t, 80, 24, false)
	h80.keys("?")
	flat := strings.Join(strings.Fields(ansi.Strip(h80.m.overlay.VP.GetContent())), " ")
	for _, g := range helpview.Glossary {
		if !strings.Contains(flat, strings.Join(strings.Fields(g[1]), " ")) {
			t.Errorf("at 80 columns the help lacks %q", g[0])
		}
	}
	iw := h80.m.overlay.VP.Width()
	for _, l := range strings.Split(h80.m.overlay.VP.GetContent(), "\n") {
		for _, g := range helpview.Glossary {
			if strings.Contains(l, g[0]+" ") && ansi.StringWidth(l) > iw {
				t.Errorf("the help's line for %q is wider than the overlay (%d > %d), so it is cut", g[0], ansi.StringWidth(l), iw)
			}
		}
	}
	h.keys("esc", "z")
	screenHas(t, strings.Join(strings.Fields(h.plain()), " "), "✓ guarded: at least one leg asks a person before it runs")
}

// The detail of a blocked tool does not say it is served to
// agents; a tool that is served says so only when a gateway runs.
func TestDetail_TellsTheTruthAboutAgents(t *testing.T) {
	h := newHarness(t, 100, 30, true)
	h.m.opts.GatewayURL = "http://127.0.0.1:7878/mcp"
	h.m.detail.Gateway = true
	for i, n := range rowNames(h.m) {
		if n == "mail__send_email" {
			h.m.tools.Cursor = i
		}
	}
	h.keys("enter")
	screenHas(t, ansi.Strip(h.m.detail.VP.GetContent()), "served to agents as mail__send_email")
	h.keys("esc", "x") // turn it off for this session: blocked
	h.waitFor("send_email to be blocked", func(m Model) bool {
		tl, ok := m.snap.Tool("mail", "send_email")
		return ok && tl.Class.Tier == trust.TierBlocked
	})
	h.keys("enter")
	content := strings.Join(strings.Fields(ansi.Strip(h.m.detail.VP.GetContent())), " ")
	if strings.Contains(content, "served to agents as") || !strings.Contains(content, "not served to agents: a blocked tool is neither listed to them nor callable") {
		t.Errorf("the blocked tool's detail does not tell the truth about agents:\n%s", content)
	}
	h.m.detail.Gateway = false
	h.m.detail.Refresh(h.m.detail.Tool, h.m.detail.Served, h.m.detail.Now, nil)
	if strings.Contains(ansi.Strip(h.m.detail.VP.GetContent()), "served to agents as") {
		t.Error("without a gateway the detail says the tool is served")
	}
}

// q with unsaved what-if changes asks first, through the
// guarded quit question; without changes q quits at once.
func TestQuit_UnsavedWhatIfAsksFirst(t *testing.T) {
	h := newHarness(t, 80, 24, true)
	h.keys("x") // turn the selected tool off for this session
	h.waitFor("the what-if change", func(m Model) bool { return hazards.OverrideCount(m.over) == 1 })
	nm, cmd := h.m.Update(keyPress("q"))
	h.m = *nm.(*Model)
	if cmd != nil {
		if _, ok := cmd().(tea.QuitMsg); ok {
			t.Fatal("q quit with an unsaved what-if change")
		}
	}
	if kind, ok := h.m.q.Front(); !ok || kind != question.KindQuit {
		t.Fatalf("q did not ask:\n%s", h.plain())
	}
	h.armQuestion()
	screenHas(t, strings.Join(strings.Fields(h.plain()), " "), "1 unsaved what-if change will be lost")
}

// Leaving the tour offers to restore the
// session it changed, Restore first (Enter after arming restores); what it cannot
// undo is said. Keys typed before the question armed answer nothing.
func TestTour_LeavingOffersRestore(t *testing.T) {
	for _, keep := range []bool{false, true} {
		sess, set := newDemo(t)
		if _, err := sess.Call(context.Background(), model.CallRequest{Server: "web", Tool: "fetch_url", Args: json.RawMessage(`{"url":"https://example.com"}`)}); err != nil {
			t.Fatal(err)
		}
		if err := sess.SetToolPolicy(trust.Ref{Server: "mail", Tool: "send_email"}, trust.Allow); err != nil {
			t.Fatal(err)
		}
		h := newHarnessFor(t, sess, 80, 24, false, Options{Title: "demo", Demo: set.Notes().RugPull, Tour: true})
		h.waitFor("the what-if change", func(m Model) bool { return hazards.OverrideCount(m.over) == 1 })
		h.keys("esc")
		if h.m.tour.on {
			t.Fatal("esc did not leave the tour")
		}
		screen := strings.Join(strings.Fields(h.plain()), " ")
		screenHas(t, screen, "Restore the session the tour changed?", "1 what-if change", "stays TAINTED (w, then C clears it)", "arming")
		h.keys("enter") // typed before it armed: answers nothing
		if hazards.OverrideCount(h.m.over) != 1 {
			t.Fatal("a key typed while the question armed restored the session")
		}
		h.armQuestion()
		if keep {
			h.keys("right", "enter")
		} else {
			h.keys("enter")
		}
		h.waitFor("the answer", func(m Model) bool { return !m.q.Open() })
		// Neither answer clears the taint: that makes airlock less careful, and only
		// the Grants view's guarded question does it.
		if !sess.Engine().Taint("").Tainted() {
			t.Errorf("keep=%v: leaving the tour cleared the taint", keep)
		}
		if keep {
			if len(sess.Overrides().Policy) != 1 {
				t.Errorf("keep: the tour's changes were undone")
			}
			continue
		}
		if len(sess.Overrides().Policy) != 0 {
			t.Errorf("restore left overrides %+v", sess.Overrides())
		}
		if !strings.Contains(h.m.status, "restored") {
			t.Errorf("status after restore: %q", h.m.status)
		}
	}
}

// U undoes every what-if change, after a guarded question whose
// focused answer keeps them; ? then t restarts the tour in the demo.
func TestResetKeyAndTourRestart(t *testing.T) {
	sess, set := newDemo(t)
	h := newHarnessFor(t, sess, 80, 24, true, Options{Title: "demo", Demo: set.Notes().RugPull})
	if err := sess.SetServerTrust("mail", trust.Trusted); err != nil {
		t.Fatal(err)
	}
	if err := sess.SetDisabled(trust.Ref{Server: "web", Tool: "fetch_url"}, true); err != nil {
		t.Fatal(err)
	}
	h.waitFor("two what-if changes", func(m Model) bool { return hazards.OverrideCount(m.over) == 2 })
	h.keys("U")
	screenHas(t, h.plain(), "Undo 2 what-if changes?")
	h.armQuestion()
	h.keys("enter") // focus starts on Keep them
	if hazards.OverrideCount(h.m.over) != 2 {
		t.Fatal("enter on the focused answer undid the changes")
	}
	h.keys("U")
	h.armQuestion()
	h.keys("right", "enter")
	h.waitFor("the changes undone", func(m Model) bool { return hazards.OverrideCount(m.over) == 0 })
	if o := sess.Overrides(); len(o.Trust)+len(o.Disabled) != 0 {
		t.Errorf("overrides left: %+v", o)
	}

	h.keys("?")
	screenHas(t, h.plain(), "restart the guided tour")
	h.keys("t")
	if !h.m.tour.on || h.m.tour.step != 0 {
		t.Fatalf("? t did not restart the tour (on %v step %d)", h.m.tour.on, h.m.tour.step)
	}
}

// The key a on an empty queue says so.
func TestQueue_AOnEmptySaysSo(t *testing.T) {
	h := newHarness(t, 80, 24, false)
	h.keys("a")
	if !strings.Contains(h.plain(), "nothing waits") {
		t.Errorf("a on an empty queue said nothing:\n%s", h.plain())
	}
}

// A tool whose SERVER__TOOL is no name agents' clients accept (dotted, or longer
// than the name budget) is served under a mapped name: its detail says which, and
// why, so the person can tell the name in the agent's conversation.
func TestDetail_ShowsTheMappedName(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "names", Version: "1"}, nil)
	long := strings.Repeat("read_every_note_", 8)
	for _, n := range []string{"get.item", long} {
		s.AddTool(&mcp.Tool{Name: n, InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	cfg := &config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute,
		Servers: []config.Server{{Name: "notes", Trust: trust.Trusted}}}
	sess := startManager(t, cfg, map[string]*mcp.Server{"notes": s})
	h := newHarnessFor(t, sess, 120, 40, true, Options{Title: "names"})
	h.m.detail.Gateway = true
	for _, tc := range []struct{ tool, why string }{
		{"get.item", "holds characters other than A-Z a-z 0-9 _ -"},
		{long, "is longer than the 44-byte name budget"},
	} {
		ti, _ := sess.Snapshot().Tool("notes", tc.tool)
		served, ok := sess.Snapshot().ServedName(&ti)
		if !ok || served == ti.Ref.Qualified() {
			t.Fatalf("%s is served as %q %v", tc.tool, served, ok)
		}
		h.m.openDetail(ti)
		content := strings.Join(strings.Fields(ansi.Strip(h.m.detail.VP.GetContent())), " ")
		for _, want := range []string{"served to agents as " + served, "the agent calls it " + served, tc.why} {
			if !strings.Contains(content, want) {
				t.Errorf("the detail of %s lacks %q:\n%s", tc.tool, want, content)
			}
		}
		h.keys("esc")
	}
}
