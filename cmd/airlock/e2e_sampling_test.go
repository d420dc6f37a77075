//go:build unix

package main

import (
	"strings"
	"testing"
	"time"
)

// `airlock call` without a terminal: a server's sampling request and its
// elicitation are declined at once with a clear message on stderr, never a silent
// wait for the call timeout.
func TestCall_NoTerminalDeclinesSamplingAndElicitationAtOnce(t *testing.T) {
	cfg := everythingConfig(t, "trusted", "call_timeout = \"60s\"\n")
	began := time.Now()
	r := airlock(t, "", "call", "--config", cfg, "--yes", "everything__trigger-sampling-request", "--args", `{"prompt":"hi","maxTokens":5}`)
	if d := time.Since(began); d > 30*time.Second {
		t.Errorf("sampling took %s: it waited", d)
	}
	if !strings.Contains(r.stderr, "asks for an LLM completion (sampling)") || !strings.Contains(r.stderr, "Not a terminal: nobody can write a reply, so the sampling request is declined.") {
		t.Errorf("stderr does not say the sampling request was declined:\n%s", r.stderr)
	}
	if r.code != 6 || !strings.Contains(r.stdout, "declined") {
		t.Errorf("exit %d, want 6 (the tool's error result naming the decline); stdout:\n%s", r.code, r.stdout)
	}
	began = time.Now()
	r = airlock(t, "", "call", "--config", cfg, "--yes", "everything__trigger-elicitation-request")
	if d := time.Since(began); d > 30*time.Second {
		t.Errorf("elicitation took %s: it waited", d)
	}
	if !strings.Contains(r.stderr, "asks you for input") || !strings.Contains(r.stderr, "Not a terminal: nobody can answer, so the request is declined.") {
		t.Errorf("stderr does not say the elicitation was declined:\n%s", r.stderr)
	}
	if !strings.Contains(strings.ToLower(r.stdout), "decline") {
		t.Errorf("the server did not get a decline; stdout:\n%s", r.stdout)
	}
}

// `airlock call` on a terminal asks on it: the reply typed by hand reaches the
// server; an empty line declines.
func TestCall_TerminalAnswersSamplingByHand(t *testing.T) {
	cfg := everythingConfig(t, "trusted", "call_timeout = \"60s\"\n")
	s := startScreen(t, "call", "--config", cfg, "everything__trigger-sampling-request", "--args", `{"prompt":"say hi","maxTokens":5}`)
	s.waitFor("Allow this call once? [y/N]")
	s.keys("y\r")
	s.waitFor("One line; an empty line declines")
	s.waitFor("say hi")
	s.keys("hi, typed by a person\r")
	s.waitFor("LLM sampling result")
	s.waitFor("hi, typed by a person")
	s.waitExit("airlock call", 20*time.Second)
}

// On the real binary at 80x24 with the real server-everything: a sampling
// request during the person's call is a question in the overlay; once armed, a
// reply written by hand goes back to the server; another one is declined with esc.
func TestE2E_SamplingAnsweredByHandAndDeclined(t *testing.T) {
	s := everythingScreen(t, "trusted", "call_timeout = \"60s\"\n")
	s.keys("/")
	s.keys("trigger-sampling-request")
	s.keys("\r")
	s.waitFor("trigger-sampling")

	call := func() {
		s.keys("c")
		s.waitFor("call everything")
		s.keys("say hi")
		s.keys(keyCtrlS)
		s.allowDestructive()
		s.waitFor("asks for an LLM completion")
		s.waitFor("say hi")
		s.waitFor("You are a helpful test server.")
	}
	call()
	// Typed at once, before the question armed: never lands in the reply.
	s.keys("early")
	s.keys(keyCtrlS)
	s.waitGone("arming", "asks for an LLM completion")
	if strings.Contains(s.text(), "early") {
		t.Fatalf("keys typed while arming reached the reply:\n%s", s.text())
	}
	s.keys("hi from a person")
	s.keys(keyCtrlS)
	s.waitFor("LLM sampling result")
	for range 8 {
		s.keys("j")
	}
	s.waitFor("hi from a person")
	s.keys(keyEsc)

	call()
	s.waitGone("arming", "asks for an LLM completion")
	s.keys(keyEsc)
	s.waitFor("person declined the sampling request")
}
