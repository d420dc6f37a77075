//go:build unix

package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// The text of a notification is escaped and bounded: a server's name cannot end
// the escape sequence or start another, and cannot make it long.
func TestNotifyText_EscapedAndBounded(t *testing.T) {
	hostile := "airlock: server \x1b]0;pwned\a\x1b\\\u009c\u202e" + strings.Repeat("é", 300) + " asks you for input"
	got := notifyText(hostile)
	if strings.ContainsAny(got, "\x1b\a\u009c\u202e\n") {
		t.Errorf("control characters reached the notification: %q", got)
	}
	if len(got) > maxNotifyBytes || !strings.HasSuffix(got, "…") {
		t.Errorf("%d bytes, want at most %d, cut with …: %q", len(got), maxNotifyBytes, got)
	}
	if !strings.Contains(got, "⟨ESC⟩]0;pwned⟨BEL⟩") {
		t.Errorf("the server's bytes are not shown escaped: %q", got)
	}
}

// [notify] command runs (no shell) with the summary as its last argument while
// the terminal is not focused, never while it is; a command that fails is said
// once in the log and the status line, not again.
func TestNotify_CommandGetsTheSummaryLastAndFailsOnce(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "args")
	script := filepath.Join(dir, "notify")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '"+out+"'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, 100, 30, false)
	h.m.notifier.command = []string{script, "--app", "airlock"}
	summary := "airlock: server x;$(touch " + filepath.Join(dir, "ran") + ") asks you for input"
	if cmd := h.m.notify(summary); cmd != nil {
		t.Fatal("notified while focused")
	}
	h.send(tea.BlurMsg{})
	cmd := h.m.notify(summary)
	if cmd == nil {
		t.Fatal("no notification while not focused")
	}
	if msg := cmd().(notifiedMsg); msg.err != nil {
		t.Fatal(msg.err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "--app\nairlock\n"+summary+"\n"; got != want {
		t.Errorf("the command got %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the summary reached a shell")
	}
	if h.m.notify(summary) != nil {
		t.Error("a second notification within notifyEvery")
	}

	h.m.notifier.command = []string{filepath.Join(dir, "missing")}
	before := len(h.m.ring.Entries)
	for range 2 {
		h.m.notifier.last = h.m.notifier.last.Add(-notifyEvery)
		msg := h.m.notify(summary)()
		if msg.(notifiedMsg).err == nil {
			t.Fatal("a missing command did not fail")
		}
		h.send(msg)
	}
	if got := h.m.ring.Entries[before:]; len(got) != 1 || !strings.Contains(got[0].Text, "the [notify] command failed") || !strings.Contains(got[0].Text, "missing") {
		t.Errorf("log after two failures: %+v, want one line naming the command", got)
	}
	if !strings.Contains(h.m.status, "[notify] command failed") {
		t.Errorf("status %q", h.m.status)
	}
}

// oscFor writes one sequence where the terminal is known to show it, both else.
func TestOSCFor(t *testing.T) {
	for _, tc := range []struct {
		term, prog string
		want       oscKind
	}{
		{"xterm-256color", "", osc9 | osc777},
		{"xterm-256color", "iTerm.app", osc9},
		{"xterm-256color", "WezTerm", osc9},
		{"xterm-kitty", "", osc9},
		{"foot", "", osc777},
		{"rxvt-unicode-256color", "", osc777},
	} {
		env := map[string]string{"TERM": tc.term, "TERM_PROGRAM": tc.prog}
		if got := oscFor(func(k string) string { return env[k] }); got != tc.want {
			t.Errorf("TERM=%s TERM_PROGRAM=%s: %b, want %b", tc.term, tc.prog, got, tc.want)
		}
	}
}
