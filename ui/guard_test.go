package ui

// Update-level tests of the input guard: a question never takes
// keys typed before the person could see it, and a question that arrives while the
// person types waits behind a badge.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/question"
)

// repoServer is an upstream whose tools count the calls that reached it:
// delete_repo (destructive), write_note (a write with a text field) and ask (which
// elicits, so that a form of server B can be open).
type repoServer struct {
	deletes, writes atomic.Int32
}

func (r *repoServer) server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "repo", Version: "1"}, nil)
	yes, no := true, false
	type delArgs struct {
		Repo string `json:"repo"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "delete_repo", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no}},
		func(context.Context, *mcp.CallToolRequest, delArgs) (*mcp.CallToolResult, any, error) {
			r.deletes.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted"}}}, nil, nil
		})
	type noteArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "write_note", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no}},
		func(context.Context, *mcp.CallToolRequest, noteArgs) (*mcp.CallToolResult, any, error) {
			r.writes.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "written"}}}, nil, nil
		})
	addAskTool(s, "Your answer?", "answer", func(res *mcp.ElicitResult) string { return res.Action })
	return s
}

// repoHarness is a real session.Manager over the counting server (trusted, so
// that only the tier decides), driven at the Update level.
func repoHarness(t *testing.T) (*harness, *repoServer) {
	t.Helper()
	r := &repoServer{}
	cfg := &config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute, Servers: []config.Server{
		{Name: "repo", Trust: trust.Trusted, ConnectTimeout: 10 * time.Second, CallTimeout: time.Minute},
	}}
	sess := startManager(t, cfg, map[string]*mcp.Server{"repo": r.server()})
	return newHarnessFor(t, sess, 100, 30, true, Options{SaveDir: t.TempDir()}), r
}

// typeText sends one key press per rune, each a little after the one before on
// the guard's clock (a person typing steadily, ~120 ms a key).
func (h *harness) typeText(s string) {
	h.t.Helper()
	for _, r := range s {
		h.advance(120 * time.Millisecond)
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// waitAsked waits until the engine holds n pending calls and the UI has seen them.
func (h *harness) waitAsked(n int) {
	h.t.Helper()
	h.waitFor("the approval to reach the UI", func(m Model) bool {
		return len(h.sess.Engine().Pending()) == n && uiQueued(m) == n
	})
}

// stillPending fails unless the call is still waiting: nothing answered it.
func stillPending(t *testing.T, ch <-chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s: the call was answered (err %v); it must still wait", what, err)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestGuard_KeySoonAfterAgentCallDoesNotAnswer: on the main screen `c` (call) pressed
// 250 ms after an agent's call arrives must not answer it (it was "allow for this
// context" before the guard).
func TestGuard_KeySoonAfterAgentCallDoesNotAnswer(t *testing.T) {
	h, _ := repoHarness(t)
	done := agentCall(context.Background(), h.sess, "repo__write_note", `{"text":"x"}`)
	h.waitAsked(1)
	h.advance(250 * time.Millisecond)
	h.keys("c")
	h.advance(100 * time.Millisecond)
	h.keys("enter")
	stillPending(t, done, "c and enter 250 ms after the call arrived")
	if n := len(h.sess.Engine().Pending()); n != 1 {
		t.Fatalf("engine pending = %d, want 1", n)
	}
	// A later call in the same context still asks: nothing was granted.
	second := agentCall(context.Background(), h.sess, "repo__write_note", `{"text":"y"}`)
	h.waitAsked(2)
	stillPending(t, second, "the agent's next call")
}

// TestGuard_TypingIntoFormDoesNotApproveDestructive: the person types "ask my
// employer" into a call form; a destructive delete_repo arrives mid-word. Nothing
// reaches the upstream server and every letter lands in the form.
func TestGuard_TypingIntoFormDoesNotApproveDestructive(t *testing.T) {
	h, r := repoHarness(t)
	h.selectTool("repo__write_note")
	h.keys("c")
	if h.m.screen != screenForm {
		t.Fatalf("c did not open the form:\n%s", h.plain())
	}
	h.typeText("ask my empl")
	done := agentCall(context.Background(), h.sess, "repo__delete_repo", `{"repo":"prod"}`)
	h.waitAsked(1)
	h.typeText("oyer")
	h.typeText("yyy")
	h.send(tea.KeyPressMsg{Code: 'y', Mod: tea.ModCtrl})
	stillPending(t, done, "typing into the form")
	if h.m.screen != screenForm {
		t.Fatalf("the form lost focus to the question:\n%s", h.plain())
	}
	screenHas(t, h.plain(), "ask my employeryyy", "1 approval waiting — press a")
	h.keys("tab", "enter") // enter on the form's last field submits the person's own call
	stillPending(t, done, "tab and enter")
	if n := r.deletes.Load(); n != 0 {
		t.Fatalf("delete_repo reached the server %d times", n)
	}
}

// TestGuard_TabEnterBurstDoesNotAllow: Tab then Enter in one burst as the dialog
// arrives never gives "allow once".
func TestGuard_TabEnterBurstDoesNotAllow(t *testing.T) {
	h, r := repoHarness(t)
	done := agentCall(context.Background(), h.sess, "repo__write_note", `{"text":"x"}`)
	h.waitAsked(1)
	h.keys("tab", "enter")
	h.advance(30 * time.Millisecond)
	h.keys("right", "enter")
	stillPending(t, done, "tab+enter burst")
	if n := r.writes.Load(); n != 0 {
		t.Fatalf("write_note reached the server %d times", n)
	}
}

// TestGuard_QueuedCallsArmAfresh: with two calls queued, `o o` allows neither;
// answering the first with a deliberate allow never answers the second with the
// same key stream.
func TestGuard_QueuedCallsArmAfresh(t *testing.T) {
	h, r := repoHarness(t)
	first := agentCall(context.Background(), h.sess, "repo__write_note", `{"text":"1"}`)
	h.waitAsked(1)
	second := agentCall(context.Background(), h.sess, "repo__write_note", `{"text":"2"}`)
	h.waitAsked(2)
	h.keys("o", "o")
	h.keys("y", "y")
	stillPending(t, first, "o o")
	stillPending(t, second, "o o")

	// Arm the first deliberately, allow it, and keep the same key stream going.
	h.armQuestion()
	h.keys("right", "enter", "ctrl+y", "right", "enter", "ctrl+y")
	if err := outcome(t, first); err != nil {
		t.Fatalf("the first call, deliberately allowed: %v", err)
	}
	stillPending(t, second, "the key stream that answered the first")
	if n := r.writes.Load(); n != 1 {
		t.Fatalf("write_note ran %d times, want 1", n)
	}
}

// TestGuard_DialogDoesNotStealKeys: a question never takes focus from the `/`
// filter, a call form or an elicitation form; it waits behind a badge.
func TestGuard_DialogDoesNotStealKeys(t *testing.T) {
	t.Run("filter", func(t *testing.T) {
		h, _ := repoHarness(t)
		h.keys("/")
		h.typeText("del")
		done := agentCall(context.Background(), h.sess, "repo__write_note", `{"text":"x"}`)
		h.waitAsked(1)
		h.typeText("ete")
		h.keys("tab", "enter")
		stillPending(t, done, "typing a filter")
		if h.m.tools.Text != "delete" {
			t.Fatalf("filter text %q, want every letter typed", h.m.tools.Text)
		}
		screenHas(t, h.plain(), "1 approval waiting")
	})
	t.Run("elicitation", func(t *testing.T) {
		h, _ := repoHarness(t)
		h.selectTool("repo__ask")
		h.keys("c")
		h.send(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
		h.waitFor("the elicitation", func(m Model) bool { return m.q.Count(question.KindElicitation) == 1 })
		h.armQuestion()
		screenHas(t, h.plain(), "Your answer?", "repo (✓ trusted) asks for input")
		h.typeText("hello")
		done := agentCall(context.Background(), h.sess, "repo__write_note", `{"text":"x"}`)
		h.waitAsked(1)
		h.typeText(" world")
		h.send(tea.KeyPressMsg{Code: 'y', Mod: tea.ModCtrl})
		stillPending(t, done, "typing into an elicitation")
		screenHas(t, h.plain(), "hello world", "Your answer?", "1 more waiting after this one")
	})
}

// selectTool moves the tools pane's cursor to a tool by qualified name.
func (h *harness) selectTool(tool string) {
	h.t.Helper()
	for i, n := range rowNames(h.m) {
		if n == tool {
			h.m.tools.Cursor = i
		}
	}
	if selected(h.m) != tool {
		h.t.Fatalf("no row %s in %v", tool, rowNames(h.m))
	}
}

var _ = json.Valid
var _ = model.AllowOnce

// uiQueued is the number of approvals the UI holds.
func uiQueued(m Model) int { return m.q.Count(question.KindApproval) }

// frontPending is the call the front question asks about (nil if none).
func frontPending(m Model) *model.Pending {
	p, _ := m.q.FrontApproval()
	return p
}

// frontIs reports whether the open question is of kind k.
func frontIs(m Model, k question.Kind) bool {
	f, ok := m.q.Front()
	return ok && f == k && m.q.Open()
}

// TestGuard_ElicitationDoesNotCaptureTyping: a
// server's request for input that arrives while the person types into another
// server's call form waits behind the badge; the typing, tab and ctrl+s stay with
// the form and nothing answers the server.
func TestGuard_ElicitationDoesNotCaptureTyping(t *testing.T) {
	h, _ := repoHarness(t)
	h.selectTool("repo__write_note")
	h.keys("c")
	h.typeText("hunter")
	asked := agentCall(context.Background(), h.sess, "repo__ask", `{}`) // it elicits
	h.waitFor("the request for input", func(m Model) bool { return m.q.Count(question.KindElicitation) == 1 })
	h.typeText("2password")
	h.send(tea.KeyPressMsg{Code: 'y', Mod: tea.ModCtrl})
	if h.m.screen != screenForm || h.m.q.Open() {
		t.Fatalf("the request for input took focus from the form:\n%s", h.plain())
	}
	screenHas(t, h.plain(), "hunter2password", "1 request for input waiting — press a")
	stillPending(t, asked, "typing into another server's form")
	// Opened deliberately, it names the server and its trust first, and arms.
	h.keys("esc", "a")
	if !h.m.q.Open() || h.m.q.Armed() {
		t.Fatal("a did not open the request for input, arming")
	}
	h.typeText("x")
	h.send(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	stillPending(t, asked, "keys while the request for input arms")
	h.armQuestion()
	screenHas(t, h.plain(), "server repo (✓ trusted) asks for input")
	h.send(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	if err := outcome(t, asked); err != nil {
		t.Fatalf("the declined request's call: %v", err)
	}
}

// TestGuardGolden: the badge over a call form, and a dialog while it arms, at
// 80x24 and 60x20.
func TestGuardGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {60, 20}} {
		h, _ := repoHarness(t)
		h.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		name := func(what string) string {
			return "guard_" + what + "_" + itoa(size[0]) + "x" + itoa(size[1]) + ".golden"
		}
		h.selectTool("repo__write_note")
		h.keys("c")
		h.typeText("ask my empl")
		done := agentCall(context.Background(), h.sess, "repo__delete_repo", `{"repo":"prod"}`)
		h.waitAsked(1)
		h.typeText("oyer")
		golden(t, name("badge"), h.plain())
		h.keys("esc")
		h.advance(question.MinQuiet)
		h.send(h.m.q.PendingTick())
		if !h.m.q.Open() || h.m.q.Armed() {
			t.Fatalf("after esc and a quiet keyboard the dialog is not open and arming:\n%s", h.plain())
		}
		golden(t, name("arming"), h.plain())
		h.armQuestion()
		h.keys("esc")
		if err := outcome(t, done); err == nil {
			t.Fatal("esc did not deny")
		}
	}
}

func itoa(n int) string { return fmt.Sprint(n) }

// With one question, the status line says once who asks for what: "⚑ 1 approval
// waiting" beside "⚑ approval needed: …" said it twice and cut the part that
// names the call.
func TestStatusLine_OneQuestionSaidOnce(t *testing.T) {
	h, _ := repoHarness(t)
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	done := agentCall(context.Background(), h.sess, "repo__delete_repo", `{"repo":"prod"}`)
	h.waitAsked(1)
	line := ansi.Strip(h.m.statusLine())
	if strings.Count(line, "⚑") != 1 || !strings.Contains(line, "press a") {
		t.Errorf("the status line of one waiting question: %q", line)
	}
	h.keys("a")
	h.armQuestion()
	line = ansi.Strip(h.m.statusLine())
	if strings.Count(line, "⚑") != 1 {
		t.Errorf("the status line of one open question: %q", line)
	}
	h.keys("esc")
	if err := outcome(t, done); err == nil {
		t.Fatal("esc did not deny")
	}
	h.drain()
	if line := ansi.Strip(h.m.statusLine()); strings.Contains(line, "⚑") {
		t.Errorf("after the question was answered the status line says %q", line)
	}
}
