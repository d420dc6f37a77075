package ui

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/demo"
)

// An agent's auto-allowed call that returns a secret leaves a
// trace on screen: the strip on the main screen names it, Activity (v) lists it
// with who, tier, decision and outcome, and enter opens the full record with the
// arguments and the result, escaped.
func TestActivity_AgentAutoAllowedCallIsVisible(t *testing.T) {
	h := newHarness(t, 80, 24, true)
	agentCtx := "agent-7f3a"
	call := func(tool string, args string) {
		t.Helper()
		if _, err := h.sess.Call(context.Background(), model.CallRequest{Context: agentCtx, Client: "e2e-agent", Server: strings.Split(tool, "__")[0], Tool: strings.Split(tool, "__")[1], Args: json.RawMessage(args)}); err != nil {
			t.Fatal(err)
		}
	}
	call("notes__list_notes", `{}`)
	h.waitFor("the agent's call in the activity", func(m Model) bool { return m.acts.Calls == 1 })
	screenHas(t, h.plain(), "last call", "notes__list_notes", "e2e-agent", "✓ ok", "v: activity")

	h.keys("v")
	if h.m.screen != screenActivity {
		t.Fatalf("v did not open Activity:\n%s", h.plain())
	}
	screenHas(t, h.plain(), "Activity · 1 call", "notes__list_notes", "e2e-agent", "allowed by policy", "✓ ok")
	h.keys("enter")
	screen := h.plain()
	screenHas(t, screen, "full record", "agent e2e-agent", agentCtx, "allowed by policy")
	content := ansi.Strip(h.m.activity.VP.GetContent())
	screenHas(t, content, "Arguments", "Content")
	if !strings.Contains(content, "note-1") {
		t.Errorf("the record lacks the result:\n%s", content)
	}

	// A page with terminal escapes: the record shows them as marks, never raw.
	h.keys("esc", "esc")
	call("web__fetch_url", `{"url":"`+demo.InjectionURL+`"}`)
	h.waitFor("the second call", func(m Model) bool { return m.acts.Calls == 2 })
	h.keys("v", "enter")
	content = h.m.activity.VP.GetContent()
	if !strings.Contains(ansi.Strip(content), "⟨ESC⟩]0;pwned") {
		t.Errorf("the record lacks the escaped page:\n%s", ansi.Strip(content))
	}
	if strings.Contains(content, "\x1b]0;pwned") {
		t.Error("the page's escape reached the screen raw")
	}
	h.keys("esc")
	if !h.m.activity.Open && h.m.screen == screenActivity {
		screenHas(t, h.plain(), "web__fetch_url", "notes__list_notes")
	} else {
		t.Fatalf("esc did not close the record: screen %v open %v", h.m.screen, h.m.activity.Open)
	}
	h.keys("esc")
	if h.m.screen != screenMain {
		t.Errorf("esc from Activity went to %v, want the main screen", h.m.screen)
	}
}

// Status messages land in Activity, whole, so the status line
// may cut one and nothing is lost.
func TestActivity_StatusMessagesLandThereWhole(t *testing.T) {
	h := newHarness(t, 60, 20, false)
	long := "sixty columns cannot hold this, and its last words: the end"
	h.send(reconnectedMsg{server: "docs", err: errors.New(long)})
	line := strings.Split(h.plain(), "\n")[18]
	if strings.Contains(line, "the end") || !strings.Contains(line, "v: all of it") {
		t.Errorf("a cut status line must point at Activity: %q", line)
	}
	h.keys("v")
	screenHas(t, h.plain(), "the end")
}

// Golden: the activity list and the strip with two agent calls and a denial, at
// 80x24 and 60x20.
func TestActivity_Golden(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {60, 20}} {
		h := newHarness(t, sz[0], sz[1], false)
		at := fixedNow
		h.send(eventMsg{event: model.CallFinished{CallID: "c1", Client: "claude-code", Context: "agent-1a2b", Server: "notes", Tool: "list_notes",
			Tier: "read", Args: json.RawMessage(`{}`), Decision: "allow", DecidedBy: "policy", Outcome: "ok",
			Result: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wifi password: hunter2"}}}, At: at, Duration: 12 * time.Millisecond}})
		h.send(eventMsg{event: model.CallFinished{CallID: "c2", Server: "mail", Tool: "send_email", Tier: "destructive",
			Args: json.RawMessage(`{"to":"boss@example.com"}`), Decision: "deny", DecidedBy: "person", Outcome: "denied", Err: "call denied by the person at airlock", At: at.Add(time.Second), Duration: 3 * time.Second}})
		name := func(s string) string { return "activity_" + s + "_" + itoa(sz[0]) + "x" + itoa(sz[1]) + ".golden" }
		golden(t, name("strip"), h.plain())
		h.keys("v")
		golden(t, name("list"), h.plain())
		h.keys("down", "enter")
		golden(t, name("record"), h.plain())
	}
}

// Calls the session let go unread (the screen fell behind) are said, on the status
// line and in Activity, with where their records are: the list does not look
// complete when it is not. Dropped log lines alone are counted on the logs screen.
func TestActivity_CallsLetGoUnreadAreSaid(t *testing.T) {
	h := newHarness(t, 80, 24, false)
	h.send(eventMsg{event: model.Dropped{Count: 7}})
	if strings.Contains(h.plain(), "not listed") {
		t.Errorf("dropped log lines alone claimed calls were not listed:\n%s", h.plain())
	}
	h.send(eventMsg{event: model.Dropped{Calls: 256}})
	screenHas(t, h.plain(), "256 calls")
	h.keys("v")
	screenHas(t, h.plain(), "256 calls ended while the screen was not keeping up", "audit log")
}
