package ui

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/model"
)

// nameToken is a qualified name on screen, whole or cut.
var nameToken = regexp.MustCompile(`[^\s()\[\],;:'"]*__[^\s()\[\],;:'"]*`)

// checkCuts fails when a view shows a qualified name of the npm servers cut
// without "…" (a look-alike: "everything__trigger-"), or a cut that two of
// the names on the same screen could both be.
func checkCuts(t *testing.T, view, screen string, names map[string]bool) {
	t.Helper()
	lines := strings.Split(strings.NewReplacer("│", " ", "┃", " ", "╭", " ", "╮", " ").Replace(screen), "\n")
	for i, l := range lines {
		for _, tok := range nameToken.FindAllString(l, -1) {
			tok = strings.TrimRight(tok, ".")
			if names[tok] {
				continue
			}
			if !strings.Contains(tok, "…") {
				// A name wrapped onto the next line is whole when joined.
				if i+1 < len(lines) && strings.HasSuffix(strings.TrimSpace(l), tok) {
					next := strings.Fields(lines[i+1])
					if len(next) > 0 && names[tok+next[0]] {
						continue
					}
				}
				if known(tok, names) {
					t.Errorf("%s: %q is cut without \"…\":\n%s", view, tok, screen)
				}
				continue
			}
			// A cut keeps its name's start and end: it must be one name's only.
			var could []string
			for n := range names {
				if cutOf(tok, n) {
					could = append(could, n)
				}
			}
			if len(could) > 1 && !strings.HasSuffix(tok, "…") {
				t.Errorf("%s: %q could be any of %v:\n%s", view, tok, could, screen)
			}
		}
	}
}

// cutOf reports whether cut (pieces of a name joined by "…") could be name:
// its first piece starts it, its last ends it, the others follow in order.
func cutOf(cut, name string) bool {
	pieces := strings.Split(cut, "…")
	if !strings.HasPrefix(name, pieces[0]) {
		return false
	}
	rest := name[len(pieces[0]):]
	last := pieces[len(pieces)-1]
	for _, p := range pieces[1 : len(pieces)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return strings.HasSuffix(rest, last) && len(rest) >= len(last)
}

// known reports whether tok is a proper part of one of the names (a cut of it).
func known(tok string, names map[string]bool) bool {
	for n := range names {
		if n != tok && (strings.HasPrefix(n, tok) || strings.HasSuffix(n, tok)) {
			return true
		}
	}
	return false
}

// Every view, with the npm servers' longest names at 60 columns (and 80):
// a name is shown whole or cut with "…", never cut into a look-alike.
func TestNames_EveryViewCutsWithAnEllipsis(t *testing.T) {
	names := map[string]bool{}
	for server, tools := range npmTools {
		for _, tl := range tools {
			names[server+"__"+tl[0]] = true
		}
	}
	const long = "everything__trigger-long-running-operation"
	for _, size := range [][2]int{{60, 20}, {80, 24}} {
		h := npmHarnessPump(t, size[0], size[1], true, "everything", "filesystem", "memory")
		view := func(name string) {
			t.Helper()
			checkCuts(t, itoa(size[0])+"x"+itoa(size[1])+" "+name, h.plain(), names)
		}
		for i, n := range rowNames(h.m) {
			if n == long {
				h.m.tools.Cursor = i
				h.m.tools.Clamp()
			}
		}
		view("panes")
		h.keys("enter")
		view("detail")
		h.keys("esc")
		h.keys("z")
		view("hazards")
		h.keys("esc")
		h.keys("K")
		view("rules")
		h.keys("esc")

		// An agent's call of the long-named tool asks: the dialog, the queue.
		done := agentCall(context.Background(), h.sess, long, `{"duration":1,"steps":1}`)
		h.waitFor("the dialog", func(m Model) bool { return uiQueued(m) == 1 })
		h.armQuestion()
		view("dialog")
		p := h.sess.Engine().Pending()[0]
		if err := h.sess.Engine().Answer(p.ID, model.Response{Answer: model.AllowForContext}); err != nil {
			t.Fatal(err)
		}
		_ = outcome(t, done)
		h.waitFor("the dialog to close", func(m Model) bool { return uiQueued(m) == 0 })
		h.keys("w")
		view("grants")
		h.keys("esc")
		h.keys("v")
		view("activity")
		h.keys("esc")
	}
}

// The Grants view's clear-taint question, at 60 columns, with the context
// tainted by a long hyphenated name: the name is wrapped whole, never split
// at a hyphen.
func TestGrants_ClearTaintQuestionWrapsAtSpaces(t *testing.T) {
	const long = "everything__trigger-long-running-operation"
	h := npmHarnessPump(t, 60, 20, true, "everything")
	server, tool, _ := strings.Cut(long, "__")
	done := make(chan error, 1)
	go func() {
		_, err := h.sess.Call(context.Background(), model.CallRequest{Server: server, Tool: tool, Args: json.RawMessage(`{}`)})
		done <- err
	}()
	h.waitFor("the dialog", func(m Model) bool { return uiQueued(m) == 1 })
	p := h.sess.Engine().Pending()[0]
	if err := h.sess.Engine().Answer(p.ID, model.Response{Answer: model.AllowOnce}); err != nil {
		t.Fatal(err)
	}
	if err := outcome(t, done); err != nil {
		t.Fatal(err)
	}
	if !h.sess.Engine().Taint("").Tainted() {
		t.Fatal("the call did not taint the person's context")
	}
	h.waitFor("the dialog to close", func(m Model) bool { return uiQueued(m) == 0 })
	h.keys("w")
	h.keys("C")
	h.armQuestion()
	screen := h.plain()
	if !strings.Contains(screen, long) {
		t.Errorf("the taint's name is not whole on one line:\n%s", screen)
	}
	if strings.Contains(screen, "trigger-\n") || regexp.MustCompile(`\w-\s*[┃│]\s*$`).MatchString(screen) {
		t.Errorf("a word is split at a hyphen:\n%s", screen)
	}
}
