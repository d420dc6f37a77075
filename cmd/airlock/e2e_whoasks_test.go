//go:build unix

package main

import (
	"strings"
	"testing"
)

// An agent's call with a long argument list, through the demo's gateway, in a
// 60x20 terminal: the dialog's first rows say who asks (the agent and its
// token's context), the server and its trust, the tool and its tier, and why
// it asks; the arguments scroll below them.
func TestE2E_DialogSaysWhoAsksFirstAt60x20(t *testing.T) {
	addr := freeAddr(t)
	s := startScreenSized(t, t.TempDir(), 60, 20, "demo", "--gateway", addr)
	s.waitFor("ready")
	cs := connectAgent(t, s, addr)
	body := strings.Repeat("the quarterly numbers are attached; ", 20)
	args := map[string]any{"to": "eve@example.com", "subject": "quarterly numbers", "body": body}
	done := agentCall(cs, "mail__send_email", args)
	s.waitFor("allow this call?")
	s.waitGone("arming", "allow this call?")
	screen := s.text()
	var rows []string
	in := false
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "allow this call?") {
			in = true
		}
		if in {
			rows = append(rows, l)
		}
	}
	want := [][]string{
		{"allow this call?"},
		{"agent", "e2e-agent", "token:"},
		{"server", "mail"},
		{"tool", "send_email", "destructive"},
		{"why"},
		{"arguments"},
	}
	if len(rows) < len(want) {
		t.Fatalf("no dialog:\n%s", screen)
	}
	for i, w := range want {
		for _, word := range w {
			if !strings.Contains(rows[i], word) {
				t.Errorf("dialog row %d is %q, want it to hold %q:\n%s", i, strings.TrimSpace(rows[i]), word, screen)
			}
		}
	}
	if !strings.Contains(screen, "more lines") {
		t.Errorf("the long arguments do not scroll:\n%s", screen)
	}
	s.keys(keyEsc)
	s.wantDenied(done, "esc did not deny", "the denial never reached the agent")
}
