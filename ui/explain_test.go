package ui

import (
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/trust"
)

// Turning off web__fetch_url leaves the trifecta, through mail. The
// hazards view says why: mail is untrusted, so it is assumed to read untrusted
// content (its "closed world" claim is not believed).
func TestHazardsView_SaysWhyAnUntrustedServerFillsALeg(t *testing.T) {
	h := newHarness(t, 100, 40, false)
	h.keys("z") // web__fetch_url runs unasked: the leg's first row
	if ref, _ := h.m.hazards.Selected(); ref.Qualified() != "web__fetch_url" {
		t.Fatalf("cursor on %v, want web__fetch_url", ref)
	}
	h.keys("x")
	h.waitFor("web__fetch_url off", func(m Model) bool { return m.over.Disabled[trust.Ref{Server: "web", Tool: "fetch_url"}] })
	if !hasHazard(h.m, trust.HazardLethalTrifecta) {
		t.Fatal("the trifecta should remain through mail")
	}
	screen := strings.Join(strings.Fields(strings.ReplaceAll(h.plain(), "│", " ")), " ")
	for _, want := range []string{
		"server mail is untrusted, so it is assumed to read untrusted content (its openWorldHint=false is not believed)",
		"server mail is untrusted, so it is assumed able to send data out",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("hazards view lacks %q:\n%s", want, h.plain())
		}
	}
	if want := "lethal-trifecta remains: server mail is untrusted, so it is assumed to read untrusted content"; !strings.Contains(h.m.status, want) {
		t.Errorf("status %q lacks %q", h.m.status, want)
	}
	// A trusted server's declaration is no assumption: nothing is said of notes.
	if strings.Contains(screen, "server notes is") {
		t.Errorf("a note about notes:\n%s", h.plain())
	}
}

// Making the lying mail server trusted says which of its claims
// airlock now believes.
func TestWhatIfTrust_SaysWhichClaimsAreNowBelieved(t *testing.T) {
	h := newHarness(t, 160, 30, false)
	h.keys("tab", "down", "down")
	if h.m.servers.Selected() != "mail" {
		t.Fatalf("selected %q", h.m.servers.Selected())
	}
	h.keys("T") // untrusted → blocked: nothing is believed
	h.waitFor("mail blocked", func(m Model) bool { s, _ := m.snap.Server("mail"); return s.Trust == trust.BlockedServer })
	if strings.Contains(h.m.status, "believed") {
		t.Errorf("blocking says %q", h.m.status)
	}
	h.keys("T") // blocked → trusted, which loosens: the chord
	h.armQuestion()
	h.keys("right", "enter", "ctrl+y")
	h.waitFor("mail trusted", func(m Model) bool { s, _ := m.snap.Server("mail"); return s.Trust == trust.Trusted })
	want := "now believed: send_email claims read-only, not destructive, idempotent, a closed world"
	if !strings.Contains(h.m.status, want) {
		t.Errorf("status %q lacks %q", h.m.status, want)
	}
}
