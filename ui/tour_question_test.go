package ui

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/ui/question"
)

// anyCallID is a call id, whole or cut, after "call ": its hex digits differ per run.
var anyCallID = regexp.MustCompile(`call c[0-9a-f]+`)

// tourToItsQuestion starts the demo's tour at w x h and goes to its third step,
// whose call asks only because of taint; it returns once that question is armed.
func tourToItsQuestion(t *testing.T, w, hgt int) *harness {
	t.Helper()
	sess, set := newDemo(t)
	h := newHarnessFor(t, sess, w, hgt, true, Options{Title: "demo", Demo: set.Notes().RugPull, Tour: true})
	h.keys("n", "n")
	h.waitFor("the tour's question", func(m Model) bool { return uiQueued(m) == 1 })
	h.armQuestion()
	if p := frontPending(h.m); p == nil || p.Tool.Ref != tourSend {
		t.Fatalf("the front question is about %v, want %v", p, tourSend)
	}
	return h
}

// The tour's key step keeps its caption on screen while its question is open:
// the caption's rows stay below the dialog, which keeps who asks and why at
// the top, at 60x20, 80x24 and 120x40.
func TestTour_CaptionShownWithItsQuestionOpen(t *testing.T) {
	for _, sz := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		h := tourToItsQuestion(t, sz[0], sz[1])
		screen := h.plain()
		lines := strings.Split(screen, "\n")
		if len(lines) != sz[1] {
			t.Fatalf("%dx%d: %d lines", sz[0], sz[1], len(lines))
		}
		caption := h.m.captionLines(sz[0])
		// The rule takes the footer's row (the dialog has its own keys), the text
		// the rows below.
		if len(caption) < 2 || h.m.layout.captionH != len(caption)-1 {
			t.Fatalf("%dx%d: the caption has %d rows on screen of its %d lines while the question is open:\n%s", sz[0], sz[1], h.m.layout.captionH, len(caption), screen)
		}
		// The caption's rows are the screen's last, whole: no dialog over them.
		// The dialog keeps who asks, the server, the tool and why.
		for i, c := range caption {
			got := strings.TrimRight(lines[len(lines)-len(caption)+i], " ")
			if want := strings.TrimRight(ansi.Strip(c), " "); got != want {
				t.Errorf("%dx%d: caption row %d is %q, want %q", sz[0], sz[1], i, got, want)
			}
		}
		screenHas(t, screen, "Tour 3/4", "The page web__fetch_url read tainted your context", "allow this call?", "asks    you", "server  mail", "tool    send_email", "why     this context is tainted")
		golden(t, "tour_question_"+itoa(sz[0])+"x"+itoa(sz[1])+".golden", anyCallID.ReplaceAllStringFunc(screen, func(id string) string {
			return "call c" + strings.Repeat("X", len(id)-len("call c"))
		}))
	}
}

// Leaving the tour withdraws the tour's own question with a tour sentence
// before the Restore question is asked; Restore then has no open question to
// deny with a policy sentence ("changed while you were deciding").
func TestTour_LeavingWithdrawsItsQuestion(t *testing.T) {
	h := tourToItsQuestion(t, 80, 24)
	// One round trip to notes first, so that it has surely processed the
	// client's initialized notification before its tool list changes.
	if _, err := h.sess.Call(context.Background(), model.CallRequest{Server: "notes", Tool: "list_notes"}); err != nil {
		t.Fatal(err)
	}
	h.keys("n") // step 4, the question still open
	if uiQueued(h.m) != 1 {
		t.Fatal("moving on in the tour closed the question")
	}
	h.keys("n") // past the last step: the tour ends
	if h.m.tour.on {
		t.Fatal("the tour did not end")
	}
	if n := uiQueued(h.m); n != 0 {
		t.Errorf("the tour's question is still open after leaving the tour (%d waiting):\n%s", n, h.plain())
	}
	if !frontIs(h.m, question.KindChoice) {
		t.Fatalf("the Restore question is not in front:\n%s", h.plain())
	}
	h.waitFor("the call withdrawn", func(m Model) bool { return strings.Contains(m.status, "withdrawn") })
	if !strings.Contains(h.m.status, "withdrawn: you left the tour") {
		t.Errorf("the call ended with %q, want the tour's sentence", h.m.status)
	}
	h.armQuestion()
	h.keys("enter") // Restore
	h.waitFor("the restore", func(m Model) bool { return !m.q.Open() })
	h.settle()
	if s := h.plain(); strings.Contains(s, "changed while") {
		t.Errorf("a policy sentence after Restore:\n%s", s)
	}
}
