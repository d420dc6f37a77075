package ui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/question"
)

// Issue 15 item 4: "guarded" means one thing everywhere, and ? explains the
// words a newcomer meets first.
func TestWords_GuardedOneMeaningAndGlossaryInHelp(t *testing.T) {
	h := newHarness(t, 200, 50, false)
	screen := h.plain()
	screenHas(t, screen, "guarded (at least one leg asks a person before it runs)")
	if strings.Contains(screen, "you are asked before a leg runs") {
		t.Error("the banner still says the false sentence")
	}
	h.keys("?")
	help := ansi.Strip(h.m.overlay.vp.GetContent())
	for _, g := range Glossary {
		if !strings.Contains(help, g[0]) || !strings.Contains(help, g[1]) {
			t.Errorf("help lacks the word %q: %q", g[0], g[1])
		}
	}
	screenHas(t, help, strings.TrimPrefix(trust.GuardedMeaning, "guarded: "))
	h.keys("esc", "z")
	screenHas(t, strings.Join(strings.Fields(h.plain()), " "), "✓ guarded: at least one leg asks a person before it runs")
}

// Issue 15 item 6: the detail of a blocked tool does not say it is served to
// agents; a tool that is served says so only when a gateway runs.
func TestDetail_TellsTheTruthAboutAgents(t *testing.T) {
	h := newHarness(t, 100, 30, true)
	h.m.opts.GatewayURL = "http://127.0.0.1:7878/mcp"
	h.m.detail.gateway = true
	for i, n := range rowNames(h.m) {
		if n == "mail__send_email" {
			h.m.tools.cursor = i
		}
	}
	h.keys("enter")
	screenHas(t, ansi.Strip(h.m.detail.vp.GetContent()), "served to agents as mail__send_email")
	h.keys("esc", "x") // turn it off for this session: blocked
	h.waitFor("send_email to be blocked", func(m Model) bool {
		tl, ok := m.snap.Tool("mail", "send_email")
		return ok && tl.Class.Tier == trust.TierBlocked
	})
	h.keys("enter")
	content := strings.Join(strings.Fields(ansi.Strip(h.m.detail.vp.GetContent())), " ")
	if strings.Contains(content, "served to agents as") || !strings.Contains(content, "not served to agents: a blocked tool is neither listed to them nor callable") {
		t.Errorf("the blocked tool's detail does not tell the truth about agents:\n%s", content)
	}
	h.m.detail.gateway = false
	h.m.detail.refresh(h.m.detail.tool, h.m.detail.now, nil)
	if strings.Contains(ansi.Strip(h.m.detail.vp.GetContent()), "served to agents as") {
		t.Error("without a gateway the detail says the tool is served")
	}
}

// Issue 15 item 7: q with unsaved what-if changes asks first, through the
// guarded quit question; without changes q quits at once.
func TestQuit_UnsavedWhatIfAsksFirst(t *testing.T) {
	h := newHarness(t, 80, 24, true)
	h.keys("x") // turn the selected tool off for this session
	h.waitFor("the what-if change", func(m Model) bool { return overrideCount(m.over) == 1 })
	nm, cmd := h.m.Update(keyPress("q"))
	h.m = nm.(Model)
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

// Issue 15 item 7: leaving the tour says plainly what it left changed (it does
// not undo its steps).
func TestTour_LeavingSaysWhatStaysChanged(t *testing.T) {
	sess, set := newDemo(t)
	if _, err := sess.Call(context.Background(), session.CallRequest{Server: "web", Tool: "fetch_url", Args: json.RawMessage(`{"url":"https://example.com"}`)}); err != nil {
		t.Fatal(err)
	}
	h := newHarnessFor(t, sess, 80, 24, false, Options{Title: "demo", Demo: set.Notes().RugPull, Tour: true})
	h.keys("esc")
	if h.m.tour.on {
		t.Fatal("esc did not leave the tour")
	}
	if !strings.Contains(h.m.status, "does not undo") || !strings.Contains(h.m.status, "stays TAINTED") {
		t.Errorf("leaving the tour does not say what stays changed: %q", h.m.status)
	}
}

// Issue 15 item 9: a on an empty queue says so.
func TestQueue_AOnEmptySaysSo(t *testing.T) {
	h := newHarness(t, 80, 24, false)
	h.keys("a")
	if !strings.Contains(h.plain(), "nothing waits") {
		t.Errorf("a on an empty queue said nothing:\n%s", h.plain())
	}
}
