package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/trust"
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
