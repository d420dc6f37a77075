package main

import (
	"testing"
)

// Issue 15 item 1 on the real binary: an agent's auto-allowed notes__list_notes
// returns a Wi-Fi password; the main screen's strip names the call at once, and
// Activity (v) shows it with who and how it was decided, and its full record the
// result.
func TestE2E_ActivityShowsAgentAutoAllowedCall(t *testing.T) {
	addr := freeAddr(t)
	s := startScreen(t, "demo", "--gateway", addr)
	s.waitFor("mail__send_email")
	cs := connectAgent(t, s, addr)
	notesText(t, cs) // notes__list_notes: read tier, allowed by policy, no dialog
	s.waitFor("last call")
	s.waitFor("e2e-agent")
	s.keys("v")
	s.waitFor("Activity · 1 call")
	s.waitFor("allowed by policy")
	s.keys("\r")
	s.waitFor("full record")
	s.waitFor("agent e2e-agent")
	for range 12 {
		s.keys("j")
	}
	s.waitFor("Wi-Fi password: correct-horse-battery-staple")
}
