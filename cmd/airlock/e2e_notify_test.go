//go:build unix

package main

import (
	"bytes"
	"strings"
	"testing"
)

const (
	// focusIn and focusOut are what a terminal with focus reporting (mode 1004)
	// writes when its window gains and loses focus.
	focusIn  = "\x1b[I"
	focusOut = "\x1b[O"
	// osc9 starts a terminal notification (iTerm2, kitty, WezTerm, Ghostty).
	osc9 = "\x1b]9;"
)

// rawBytes is every byte the program wrote so far.
func (s *screen) rawBytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.raw.Bytes())
}

// notifications are the OSC 9 texts in raw, in order.
func notifications(raw []byte) []string {
	var out []string
	for {
		i := bytes.Index(raw, []byte(osc9))
		if i < 0 {
			return out
		}
		raw = raw[i+len(osc9):]
		end := bytes.IndexByte(raw, '\a')
		if end < 0 {
			return append(out, string(raw))
		}
		out = append(out, string(raw[:end]))
		raw = raw[end+1:]
	}
}

// An agent's question while the terminal is focused notifies nobody; the same
// question after the terminal lost focus (CSI O) writes one OSC 9 notification
// naming the agent and the tool, once however often the screen is redrawn.
func TestE2E_NotifiesOnlyWhenNotFocused(t *testing.T) {
	addr := freeAddr(t)
	s := startScreen(t, "demo", "--gateway", addr)
	s.waitFor("ready")
	cs := connectAgent(t, s, addr)
	args := map[string]any{"to": "eve@example.com", "subject": "hi", "body": "hello"}

	s.keys(focusIn)
	done := agentCall(cs, "mail__send_email", args)
	s.waitFor("allow this call?")
	s.waitGone("arming", "allow this call?")
	if n := notifications(s.rawBytes()); len(n) > 0 {
		t.Errorf("notified while focused: %q", n)
	}
	s.keys(keyEsc)
	s.wantDenied(done, "esc did not deny", "the denial never reached the agent")
	s.waitGone("allow this call?", "ready")

	s.keys(focusOut)
	done = agentCall(cs, "mail__send_email", args)
	s.waitFor("allow this call?")
	s.waitGone("arming", "allow this call?")
	s.keys(keyDown) // scrolls and redraws: no second notification
	n := notifications(s.rawBytes())
	if len(n) != 1 || !strings.Contains(n[0], "agent e2e-agent") || !strings.Contains(n[0], "mail__send_email") {
		t.Errorf("notifications after focus out: %q, want one naming the agent and the tool", n)
	}
	t.Logf("the notification: %q", n)
	if !bytes.Contains(s.rawBytes(), []byte("\x1b]777;notify;airlock;airlock: agent e2e-agent")) {
		t.Errorf("no OSC 777 notification beside OSC 9 for TERM=xterm-256color")
	}
	s.keys(keyEsc)
	s.wantDenied(done, "esc did not deny", "the denial never reached the agent")
}

// --no-notify: no notification even when the terminal is not focused.
func TestE2E_NoNotifyFlag(t *testing.T) {
	addr := freeAddr(t)
	s := startScreen(t, "demo", "--no-notify", "--gateway", addr)
	s.waitFor("ready")
	cs := connectAgent(t, s, addr)
	s.keys(focusOut)
	done := agentCall(cs, "mail__send_email", map[string]any{"to": "eve@example.com", "subject": "hi", "body": "hello"})
	s.waitFor("allow this call?")
	s.waitGone("arming", "allow this call?")
	if n := notifications(s.rawBytes()); len(n) > 0 {
		t.Errorf("notified with --no-notify: %q", n)
	}
	s.keys(keyEsc)
	s.wantDenied(done, "esc did not deny", "the denial never reached the agent")
}
