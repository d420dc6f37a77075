//go:build unix

package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
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

// rawOf runs cmd (and every Cmd of its batches) and joins the raw output they ask
// to write; other messages are dropped.
func rawOf(cmd tea.Cmd) string {
	if cmd == nil {
		return ""
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		var sb strings.Builder
		for _, c := range msg {
			sb.WriteString(rawOf(c))
		}
		return sb.String()
	case tea.RawMsg:
		return fmt.Sprint(msg.Msg)
	}
	return ""
}

// A server's request for input and a sampling request notify like a call's
// question: only after the terminal lost focus, once when they arrive, and a
// resize (a redraw) after them notifies nothing.
func TestNotify_ElicitationAndSamplingWhileNotFocused(t *testing.T) {
	h := newHarness(t, 100, 30, false)
	el := &model.Elicitation{ID: 1, Server: "notes", Mode: "form", Message: "which?"}
	_, cmd := h.m.Update(eventMsg{event: model.ElicitationRequested{Elicitation: el}})
	if raw := rawOf(cmd); strings.Contains(raw, "\x1b]9;") {
		t.Errorf("notified while focused: %q", raw)
	}
	// Losing focus with the first still open says it waits.
	_, cmd = h.m.Update(tea.BlurMsg{})
	if raw := rawOf(cmd); !strings.Contains(raw, "\x1b]9;airlock: a request from a server still waits for your answer\a") {
		t.Errorf("losing focus with a request waiting wrote %q", raw)
	}
	h.m.notifier.last = h.m.notifier.last.Add(-notifyEvery)
	_, cmd = h.m.Update(eventMsg{event: model.ElicitationRequested{Elicitation: &model.Elicitation{ID: 2, Server: "notes", Mode: "form", Message: "which?"}}})
	raw := rawOf(cmd)
	if !strings.Contains(raw, "\x1b]9;airlock: server notes asks you for input\a") ||
		!strings.Contains(raw, "\x1b]777;notify;airlock;airlock: server notes asks you for input\a") && h.m.notifier.osc&osc777 != 0 {
		t.Errorf("the request for input wrote %q", raw)
	}
	_, cmd = h.m.Update(tea.WindowSizeMsg{Width: 90, Height: 30})
	if raw := rawOf(cmd); strings.Contains(raw, "\x1b]9;") {
		t.Errorf("a redraw notified again: %q", raw)
	}
	h.m.notifier.last = h.m.notifier.last.Add(-notifyEvery)
	_, cmd = h.m.Update(eventMsg{event: model.SamplingRequested{Request: &model.SamplingRequest{ID: 3, Server: "web"}}})
	if raw := rawOf(cmd); !strings.Contains(raw, "\x1b]9;airlock: server web asks for an LLM completion (sampling)\a") {
		t.Errorf("the sampling request wrote %q", raw)
	}
}

// A question that arrived while the terminal was focused, and is still
// unanswered when the person goes to another window, notifies then: the bell rang
// for a person who has gone. Focus coming back and going again within notifyEvery
// does not notify twice; with nothing waiting, losing focus notifies nothing.
func TestNotify_FocusLostWhileAQuestionWaits(t *testing.T) {
	h, _ := policyHarness(t, "[servers.repo.tools.write_note]\npolicy = \"ask\"\n")
	_, cmd := h.m.Update(tea.BlurMsg{})
	if raw := rawOf(cmd); raw != "" {
		t.Errorf("losing focus with nothing waiting wrote %q", raw)
	}
	h.send(tea.FocusMsg{})
	done := agentCall(context.Background(), h.sess, "repo__write_note", `{"text":"x"}`)
	h.waitAsked(1)
	_, cmd = h.m.Update(tea.BlurMsg{})
	raw := rawOf(cmd)
	if !strings.Contains(raw, "\x1b]9;airlock: agent ") || !strings.Contains(raw, "asks to run repo__write_note; it still waits for your answer\a") {
		t.Errorf("losing focus with a question waiting wrote %q", raw)
	}
	h.send(tea.FocusMsg{})
	if _, cmd = h.m.Update(tea.BlurMsg{}); rawOf(cmd) != "" {
		t.Error("a second notification within notifyEvery")
	}
	h.send(tea.FocusMsg{})
	h.armQuestion()
	h.keys("esc")
	if err := outcome(t, done); err == nil {
		t.Error("esc allowed the call")
	}
}
