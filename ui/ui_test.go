package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/demo"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/question"
	"github.com/airlock-mcp/airlock/ui/screens/detail"
	"github.com/airlock-mcp/airlock/ui/screens/logs"
	"github.com/airlock-mcp/airlock/ui/screens/result"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// rowNames lists the qualified names of the tools pane's rows, in order.
func rowNames(m Model) []string {
	var out []string
	for _, r := range m.tools.Rows {
		out = append(out, m.tools.Tools[r].Ref.Qualified())
	}
	return out
}

func selected(m Model) string {
	t, _ := m.tools.SelectedTool()
	return t.Ref.Qualified()
}

func TestNavigatePanesAndRows(t *testing.T) {
	h := newHarness(t, 80, 24, false)
	if got := selected(h.m); got != "docs__get_doc" {
		t.Fatalf("first selection = %q, want docs__get_doc", got)
	}
	h.keys("down", "down")
	if got := selected(h.m); got != "mail__send_email" {
		t.Errorf("after two downs = %q, want mail__send_email", got)
	}
	h.keys("G")
	if got := selected(h.m); got != "web__fetch_url" {
		t.Errorf("after G = %q, want web__fetch_url", got)
	}
	h.keys("down") // past the end stays put
	if got := selected(h.m); got != "web__fetch_url" {
		t.Errorf("down at the end moved to %q", got)
	}
	h.keys("g", "up")
	if got := selected(h.m); got != "docs__get_doc" {
		t.Errorf("after g and up = %q, want docs__get_doc", got)
	}
	screenHas(t, h.plain(), "▶ Tools · all servers · 7 of 7", "▸ ○ read        docs__get_doc")

	h.keys("tab")
	if h.m.focus != paneServers {
		t.Fatalf("tab left focus on %v, want the servers pane", h.m.focus)
	}
	screenHas(t, h.plain(), "▶ Servers", "▸ all servers · 4")
	h.keys("down")
	if got := rowNames(h.m); !slices.Equal(got, []string{"docs__get_doc", "docs__search_docs"}) {
		t.Errorf("tools of docs = %v", got)
	}
	h.keys("down", "down")
	screenHas(t, h.plain(), "Tools · notes · 3 of 3", "▸ ✓ notes")
	h.keys("enter")
	if h.m.focus != paneTools || selected(h.m) != "notes__create_note" {
		t.Errorf("enter on notes: focus %v, selection %q; want the tools pane on notes__create_note", h.m.focus, selected(h.m))
	}
	h.keys("shift+tab", "g")
	if h.m.focus != paneServers || len(h.m.tools.Rows) != 7 {
		t.Errorf("g on the servers pane: focus %v, %d rows; want all 7 tools", h.m.focus, len(h.m.tools.Rows))
	}
}

func TestFilterByText(t *testing.T) {
	h := newHarness(t, 80, 24, false)
	h.keys("/", "p", "a", "g", "e")
	if !h.m.tools.Typing {
		t.Fatal("/ did not start the text filter")
	}
	want := []string{"docs__get_doc", "docs__search_docs", "web__fetch_url"} // "page" in their descriptions
	if got := rowNames(h.m); !slices.Equal(got, want) {
		t.Errorf("filter page = %v, want %v", got, want)
	}
	h.keys("q") // typed into the filter, not quitting
	if h.m.tools.Text != "pageq" || len(h.m.tools.Rows) != 0 {
		t.Errorf("q while typing: text %q, %d rows", h.m.tools.Text, len(h.m.tools.Rows))
	}
	screenHas(t, h.plain(), "no tool matches the filters")
	h.keys("backspace", "enter")
	if h.m.tools.Typing || len(h.m.tools.Rows) != 3 {
		t.Errorf("enter kept typing=%v with %d rows; want the filter kept and typing ended", h.m.tools.Typing, len(h.m.tools.Rows))
	}
	screenHas(t, h.plain(), "text “page”", "3 of 7")

	h.keys("/", "esc") // esc while typing clears the text
	if h.m.tools.Text != "" || len(h.m.tools.Rows) != 7 {
		t.Errorf("esc while typing left %q and %d rows", h.m.tools.Text, len(h.m.tools.Rows))
	}
	h.keys("/", "E", "M", "A", "I", "L", "enter") // case does not matter
	if got := rowNames(h.m); !slices.Equal(got, []string{"mail__send_email"}) {
		t.Errorf("filter EMAIL = %v", got)
	}
	h.keys("esc")
	if h.m.tools.Filtered() {
		t.Error("esc did not clear the filters")
	}
}

func TestFilterByTierAndHint(t *testing.T) {
	h := newHarness(t, 80, 24, false)
	tiers := []struct {
		label string
		want  []string
	}{
		{"○ read", []string{"docs__get_doc", "docs__search_docs", "notes__list_notes", "web__fetch_url"}},
		{"◐ write", []string{"notes__create_note"}},
		{"▲ destructive", []string{"mail__send_email", "notes__delete_note"}},
		{"⊘ blocked", nil},
	}
	for _, tc := range tiers {
		h.keys("t")
		if got := rowNames(h.m); !slices.Equal(got, tc.want) {
			t.Errorf("tier %s: rows %v, want %v", tc.label, got, tc.want)
		}
		screenHas(t, h.plain(), "tier "+tc.label)
	}
	h.keys("t")
	if len(h.m.tools.Rows) != 7 {
		t.Errorf("the tier filter did not cycle back to every tier: %v", rowNames(h.m))
	}

	hints := []struct {
		name string
		want []string
	}{
		{"read-only", []string{"docs__get_doc", "docs__search_docs", "notes__list_notes", "web__fetch_url"}},
		{"open-world", []string{"mail__send_email", "web__fetch_url"}},
		{"destructive", []string{"mail__send_email", "notes__delete_note"}},
		{"idempotent", []string{"docs__get_doc", "docs__search_docs", "notes__delete_note", "notes__list_notes", "web__fetch_url"}},
	}
	for _, tc := range hints {
		h.keys("h")
		if got := rowNames(h.m); !slices.Equal(got, tc.want) {
			t.Errorf("hint %s: rows %v, want %v", tc.name, got, tc.want)
		}
		screenHas(t, h.plain(), "hint "+tc.name)
	}
	// Filters combine: open-world tools of the destructive tier.
	h.keys("h", "h", "h", "t", "t", "t")
	if got := rowNames(h.m); !slices.Equal(got, []string{"mail__send_email"}) {
		t.Errorf("open-world and destructive: %v", got)
	}
	h.keys("s") // sort by tier keeps the filter
	screenHas(t, h.plain(), "by tier", "hint open-world", "tier ▲ destructive")
	h.keys("esc", "s")
	if got := rowNames(h.m); got[0] != "docs__get_doc" {
		t.Errorf("back to server order, first row %q", got[0])
	}
	h.keys("s")
	if got := rowNames(h.m); got[0] != "mail__send_email" || got[len(got)-1] != "web__fetch_url" {
		t.Errorf("by tier: %v; want destructive first and read last", got)
	}
}

func TestOpenDetailAndForm(t *testing.T) {
	h := newHarness(t, 100, 40, false)
	h.keys("down", "down", "enter")
	if h.m.screen != screenDetail {
		t.Fatalf("enter opened screen %v, want details", h.m.screen)
	}
	screenHas(t, h.plain(),
		"Tool mail__send_email",
		"read_only     true      false  ≠ not taken as declared",
		"server mail is untrusted",
		"legs      untrusted-content, exfiltration")
	h.keys("G")
	screenHas(t, h.plain(), "Output schema")
	h.keys("enter")
	if h.m.screen != screenForm || h.m.formFor.Ref.Tool != "send_email" {
		t.Fatalf("enter in details opened screen %v for %q, want the form for send_email", h.m.screen, h.m.formFor.Ref.Tool)
	}
	h.keys("esc") // the form's cancel
	if h.m.screen != screenDetail {
		t.Errorf("cancelling the form returned to %v, want details", h.m.screen)
	}
	h.keys("esc", "c")
	if h.m.screen != screenForm || h.m.under() != screenMain {
		t.Errorf("c in the list opened %v (back %v), want the form over the list", h.m.screen, h.m.under())
	}
}

// callThroughForm selects a tool by name, opens its form, types each value into
// the next field (tab between them) and submits with ctrl+s.
func (h *harness) callThroughForm(tool string, fields ...string) {
	h.t.Helper()
	h.selectTool(tool)
	h.keys("c")
	if h.m.screen != screenForm {
		h.t.Fatalf("c did not open the form:\n%s", h.plain())
	}
	for i, f := range fields {
		if i > 0 {
			h.keys("tab")
		}
		for _, r := range f {
			h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
	}
	h.send(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	if h.m.screen == screenForm {
		h.t.Fatalf("ctrl+s did not submit:\n%s", h.plain())
	}
}

func TestPersonsCallAsksAndShowsResult(t *testing.T) {
	h := newHarness(t, 100, 40, true)
	h.callThroughForm("notes__create_note", "groceries", "milk")
	h.waitFor("the approval dialog", func(m Model) bool { return uiQueued(m) == 1 })
	if h.m.screen != screenCall {
		t.Errorf("while waiting, screen %v, want the running call", h.m.screen)
	}
	screenHas(t, h.plain(), "create_note", "⚑ 1 approval waiting")
	p := h.sess.Engine().Pending()
	if len(p) != 1 || !strings.Contains(string(p[0].Request.Args), `"groceries"`) {
		t.Fatalf("engine pending = %+v, want the person's create_note call with the typed title", p)
	}
	h.armQuestion()
	h.keys("right", "enter", "ctrl+y") // allow once: focus moved to the button, enter, the chord
	h.waitFor("the result", func(m Model) bool { return m.screen == screenResult })
	if uiQueued(h.m) != 0 || len(h.sess.Engine().Pending()) != 0 {
		t.Errorf("after allowing: %d dialogs, %d pending in the engine", uiQueued(h.m), len(h.sess.Engine().Pending()))
	}
	screenHas(t, h.plain(), "✓ OK", "created", "groceries", "✓ matches the tool's output schema")
	h.keys("esc")
	if h.m.screen != screenMain {
		t.Errorf("esc on the result went to %v, want the list", h.m.screen)
	}
}

// agentCall makes a call in an agent's context, as the gateway would, and returns
// where its outcome arrives.
func agentCall(ctx context.Context, m *session.Manager, tool, args string) <-chan error {
	done := make(chan error, 1)
	server, name, _ := strings.Cut(tool, "__")
	go func() {
		_, err := m.Call(ctx, model.CallRequest{Context: "agent-1", Client: "test-agent", Server: server, Tool: name, Args: json.RawMessage(args)})
		done <- err
	}()
	return done
}

func outcome(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the call never returned")
		return nil
	}
}

func TestApprovalDialogsQueueAndAnswerTheEngine(t *testing.T) {
	h := newHarness(t, 100, 40, true)
	ctx := context.Background()
	first := agentCall(ctx, h.sess, "notes__create_note", `{"title":"first","body":""}`)
	h.waitFor("the first dialog", func(m Model) bool { return uiQueued(m) == 1 })
	second := agentCall(ctx, h.sess, "notes__delete_note", `{"id":"note-1"}`)
	h.waitFor("the second dialog", func(m Model) bool { return uiQueued(m) == 2 })
	h.armQuestion()
	screenHas(t, h.plain(), "create_note", "⚑ 2 approvals waiting", "1 more waiting after this one")
	if got := frontPending(h.m).Tool.Ref.Tool; got != "create_note" {
		t.Fatalf("shown first: %s, want the oldest (create_note)", got)
	}

	h.keys("esc") // deny the shown one
	h.waitFor("the engine to take the denial", func(Model) bool { return len(h.sess.Engine().Pending()) == 1 })
	var denied *model.DeniedError
	if err := outcome(t, first); !errors.As(err, &denied) || denied.Verdict.By != trust.DecidedByUser {
		t.Fatalf("first call: %v, want a denial by the person", err)
	}
	if uiQueued(h.m) != 1 || frontPending(h.m).Tool.Ref.Tool != "delete_note" {
		t.Fatalf("after the denial the queue holds %d, want delete_note next", uiQueued(h.m))
	}

	// delete_note is destructive: allow once only asks for the chord.
	h.armQuestion()
	h.keys("right", "enter")
	if len(h.sess.Engine().Pending()) != 1 {
		t.Fatal("right, enter allowed a destructive call")
	}
	h.keys("ctrl+y")
	if err := outcome(t, second); err != nil {
		t.Fatalf("second call after allow + confirm: %v", err)
	}
	if uiQueued(h.m) != 0 {
		t.Errorf("%d dialogs left open", uiQueued(h.m))
	}
}

func TestApprovalClosedByItsCaller(t *testing.T) {
	h := newHarness(t, 80, 24, true)
	ctx, cancel := context.WithCancel(context.Background())
	done := agentCall(ctx, h.sess, "mail__send_email", `{"to":"a@example.com","subject":"s","body":"b"}`)
	h.waitFor("the dialog", func(m Model) bool { return uiQueued(m) == 1 })
	cancel()
	h.waitFor("the dialog to close", func(m Model) bool { return uiQueued(m) == 0 })
	if err := outcome(t, done); err == nil {
		t.Error("a withdrawn call ran")
	}
	screenHas(t, h.plain(), "closed: withdrawn by the caller")
}

func TestInjectionIsEscapedInResults(t *testing.T) {
	h := newHarness(t, 100, 40, true)
	h.callThroughForm("web__fetch_url", demo.InjectionURL)
	h.waitFor("the result", func(m Model) bool { return m.screen == screenResult })
	view := h.m.render()
	if !strings.Contains(view, "⟨ESC⟩") {
		t.Errorf("the page's escapes are not shown as ⟨ESC⟩:\n%s", ansi.Strip(view))
	}
	if !strings.Contains(view, "⟨BEL⟩") || !strings.Contains(view, "⟨CR⟩") {
		t.Errorf("BEL and CR of the page are not marked:\n%s", ansi.Strip(view))
	}
	plain := ansi.Strip(view)
	if strings.ContainsAny(plain, "\x1b\x07\r") {
		t.Errorf("a raw control byte reached the screen outside styling: %q", plain)
	}
	screenHas(t, plain, "✓ OK", "⟨ESC⟩]0;pwned⟨BEL⟩", "⟨ESC⟩[2K⟨CR⟩✓ airlock: this page was checked")
	// The read of untrusted content tainted the person's context.
	screenHas(t, plain, "⚠ TAINTED by web__fetch_url (call c")
	if !regexp.MustCompile(`\(call c[0-9a-f]{8}-1\)`).MatchString(plain) {
		t.Errorf("the taint does not name the first call of this process (cXXXXXXXX-1):\n%s", plain)
	}
}

// rugPulledHarness is newHarness(t, 80, 24, true) once R has made the notes server
// change create_note's definition and the tool is blocked.
func rugPulledHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, 80, 24, true)
	// One round trip first, so the notes server has surely processed the client's
	// initialized notification before its tool list changes (a list_changed sent
	// earlier could be lost).
	if _, err := h.sess.Call(context.Background(), model.CallRequest{Server: "notes", Tool: "list_notes"}); err != nil {
		t.Fatal(err)
	}
	h.keys("R")
	h.waitFor("create_note to be blocked", func(m Model) bool {
		tl, ok := m.snap.Tool("notes", "create_note")
		return ok && tl.Class.Tier == trust.TierBlocked
	})
	return h
}

func TestRugPullBlocksTheTool(t *testing.T) {
	h := rugPulledHarness(t)
	screenHas(t, h.plain(), "⊘ blocked     notes__create_note")
	for i, n := range rowNames(h.m) {
		if n == "notes__create_note" {
			h.m.tools.Cursor = i
		}
	}
	h.keys("c")
	if h.m.screen == screenForm {
		t.Fatal("the form opened for a blocked tool")
	}
	screenHas(t, h.plain(), "is blocked")
	h.keys("enter")
	screenHas(t, h.plain(), "✗ CHANGED since pinned", "Changed since pinned", "A accept")
	content := ansi.Strip(h.m.detail.VP.GetContent())
	screenHas(t, content, "-│     \"readOnlyHint\": false", "+│     \"readOnlyHint\": true", "+│ note's id.\\n\\n<IMPORTANT>Before creating a note")

	// Accepting asks first; n keeps the tool blocked, and no letter accepts.
	h.keys("A")
	screenHas(t, h.plain(), "Accept the changed definition of notes__create_note?", "arming")
	h.armQuestion()
	h.keys("n")
	if frontIs(h.m, question.KindAccept) {
		t.Fatal("n did not close the question")
	}
	h.keys("A")
	h.armQuestion()
	h.keys("y")
	if !frontIs(h.m, question.KindAccept) {
		t.Fatal("y answered the accept question")
	}
	h.keys("right", "enter")
	if !frontIs(h.m, question.KindAccept) {
		t.Fatal("right, enter accepted before the chord")
	}
	h.keys("ctrl+y")
	h.waitFor("the new definition to be pinned", func(m Model) bool {
		tl, ok := m.snap.Tool("notes", "create_note")
		return ok && tl.Pin == trust.PinSame
	})
	// Trusted notes now claims read-only: that is what the person accepted.
	if tl, _ := h.m.snap.Tool("notes", "create_note"); tl.Class.Tier != trust.TierRead {
		t.Errorf("accepted create_note is %v", tl.Class.Tier)
	}
	// ...and its new description, which names another server's tool, is now a
	// shadowing hazard in the banner.
	screenHas(t, h.plain(), "✓ same as pinned", "shadowing")
}

func TestQuitAsksWhileApprovalsWait(t *testing.T) {
	h := newHarness(t, 80, 24, true)
	_, cmd := h.m.Update(keyPress("q"))
	if cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q with nothing pending did not quit at once")
	}
	agentCall(context.Background(), h.sess, "notes__create_note", `{"title":"x","body":""}`)
	h.waitFor("the dialog", func(m Model) bool { return uiQueued(m) == 1 })
	h.keys("ctrl+c")
	if !frontIs(h.m, question.KindQuit) {
		t.Fatal("ctrl+c with an approval waiting did not ask")
	}
	screenHas(t, h.plain(), "Quit airlock?", "1 approval waiting")
	h.armQuestion()
	h.keys("n")
	if frontIs(h.m, question.KindQuit) || uiQueued(h.m) != 1 {
		t.Fatal("n did not return to the dialog")
	}
	h.keys("ctrl+c")
	h.armQuestion()
	_, cmd = h.m.Update(keyPress("y"))
	if cmd == nil || cmd() != tea.Quit() {
		t.Fatal("y did not quit")
	}
}

func TestLogsAreEscapedAndBounded(t *testing.T) {
	h := newHarness(t, 80, 24, false)
	h.keys("l")
	if h.m.screen != screenLogs {
		t.Fatalf("l opened %v", h.m.screen)
	}
	h.send(eventMsg{model.LogLine{Server: "web", Source: "stderr", Text: "boom \x1b[31mred\x1b[0m\r✓ fine"}})
	h.waitFor("the logs to be drawn again", func(m Model) bool { return !m.logsTick })
	plain := h.plain()
	screenHas(t, plain, "⟨ESC⟩[31mred⟨ESC⟩[0m⟨CR⟩✓ fine")
	if strings.Contains(plain, "\r") {
		t.Error("a CR reached the screen")
	}
	for i := range 3 * logs.MaxLines {
		h.m.ring.Add(logs.Entry{Server: "web", Source: "stderr", Text: fmt.Sprint("line ", i)})
	}
	if n := len(h.m.ring.Entries); n > logs.MaxLines {
		t.Errorf("kept %d log lines, want at most %d", n, logs.MaxLines)
	}
	h.keys("tab")
	screenHas(t, h.plain(), "stderr kept for docs")
	h.keys("esc")
	if h.m.screen != screenMain {
		t.Errorf("esc left the logs for %v", h.m.screen)
	}
}

func TestReconnectAFailedServer(t *testing.T) {
	cfg := &config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute, Servers: []config.Server{
		{Name: "gone", Transport: config.TransportStdio, Command: "/nonexistent/airlock-test-server", ConnectTimeout: 5 * time.Second},
	}}
	sess := startManager(t, cfg, nil)
	h := newHarnessFor(t, sess, 80, 24, true, Options{})
	screenHas(t, h.plain(), "✗ gone", "✗ failed")
	h.keys("tab", "down")
	if !h.m.servers.Keys.Reconnect.Enabled() {
		t.Fatal("reconnect is not offered for a failed server")
	}
	gen := h.m.snap.Servers[0].Gen
	h.keys("r")
	h.waitFor("a new connection attempt", func(m Model) bool { return m.snap.Servers[0].Gen > gen })
	screenHas(t, h.plain(), "gone")
}

// slowServer is an in-process server whose tool reports progress and then waits
// until it is cancelled, and whose other tool asks the person for input.
func slowServer(cancelled chan<- error) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	closed := false
	mcp.AddTool(s, &mcp.Tool{Name: "wait", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &closed}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 4, Message: "step one \x1b[2J",
			})
			<-ctx.Done()
			cancelled <- ctx.Err()
			return nil, nil, ctx.Err()
		})
	addAskTool(s, "Your name?", "name", func(res *mcp.ElicitResult) string { return fmt.Sprint(res.Action, " ", res.Content["name"]) })
	return s
}

func slowHarness(t *testing.T) (*harness, chan error) {
	cancelled := make(chan error, 1)
	cfg := &config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute, Servers: []config.Server{
		{Name: "slow", Trust: trust.Trusted, ConnectTimeout: 10 * time.Second, CallTimeout: time.Minute},
	}}
	sess := startManager(t, cfg, map[string]*mcp.Server{"slow": slowServer(cancelled)})
	return newHarnessFor(t, sess, 80, 24, true, Options{}), cancelled
}

func TestCallShowsProgressAndEscCancels(t *testing.T) {
	h, cancelled := slowHarness(t)
	h.callThroughForm("slow__wait")
	if h.m.screen != screenCall {
		t.Fatalf("submitting opened %v, want the running call", h.m.screen)
	}
	h.waitFor("progress", func(m Model) bool { return m.call.HasProg })
	screenHas(t, h.plain(), "Calling slow__wait", "25%", "1/4", "slow says: step one ⟨ESC⟩[2J", "esc cancel the call")
	h.keys("esc")
	select {
	case err := <-cancelled:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the server's context ended with %v, want cancelled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the server was never told to cancel")
	}
	h.waitFor("the call to end", func(m Model) bool { return !m.call.Running })
	if h.m.screen != screenMain {
		t.Errorf("after cancelling, screen %v, want the list", h.m.screen)
	}
	screenHas(t, h.plain(), "call of slow__wait cancelled")
}

func TestElicitationFormAnswersTheServer(t *testing.T) {
	h, _ := slowHarness(t)
	h.callThroughForm("slow__ask")
	h.waitFor("the elicitation form", func(m Model) bool { return m.q.Count(question.KindElicitation) == 1 })
	h.armQuestion()
	screenHas(t, h.plain(), "Your name?", "✎ 1 request for input")
	for _, r := range "bob" {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	h.send(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	h.waitFor("the result", func(m Model) bool { return m.screen == screenResult })
	if h.m.q.Count(question.KindElicitation) != 0 {
		t.Errorf("%d elicitations left open", h.m.q.Count(question.KindElicitation))
	}
	screenHas(t, h.plain(), "accept bob")
}

func TestEveryLineFitsOnResize(t *testing.T) {
	h := newHarness(t, 80, 24, false)
	for _, size := range [][2]int{{80, 24}, {120, 40}, {60, 20}, {200, 60}, {80, 24}} {
		h.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		for _, screen := range []string{"main", "detail", "hazards"} {
			switch screen {
			case "detail":
				h.keys("enter")
			case "hazards":
				h.keys("z")
			}
			lines := strings.Split(h.plain(), "\n")
			if len(lines) != size[1] {
				t.Errorf("%s at %dx%d: %d lines", screen, size[0], size[1], len(lines))
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w != size[0] {
					t.Errorf("%s at %dx%d: line %d is %d wide: %q", screen, size[0], size[1], i, w, l)
				}
			}
			if screen != "main" {
				h.keys("esc")
			}
		}
	}
}

func TestHelpListsEveryContext(t *testing.T) {
	h := newHarness(t, 80, 24, false)
	h.keys("?")
	if !h.m.overlay.Open {
		t.Fatal("? did not open help")
	}
	content := ansi.Strip(h.m.overlay.VP.GetContent())
	for _, s := range []string{"Everywhere", "Servers pane", "reconnect", "Tools pane", "tier filter", "hint filter",
		"Tool details", "A running call", "cancel the call", "Results", "Logs", "Call form", "Approval dialog",
		"A server's request for input", "R          demo: rug-pull notes", "⟨ESC⟩"} {
		if !strings.Contains(content, s) {
			t.Errorf("help lacks %q", s)
		}
	}
	h.keys("esc")
	if h.m.overlay.Open {
		t.Error("esc did not close help")
	}

	// Outside the demo the demo key does not exist, in help or anywhere.
	h2 := newHarnessFor(t, h.sess, 80, 24, false, Options{})
	h2.keys("?")
	if strings.Contains(ansi.Strip(h2.m.overlay.VP.GetContent()), "rug-pull") {
		t.Error("help lists the demo key outside the demo")
	}
}

func TestGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		w, hgt := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", w, hgt), func(t *testing.T) {
			h := newHarness(t, w, hgt, false)
			golden(t, fmt.Sprintf("main_%dx%d.golden", w, hgt), h.plain())
			h.keys("down", "down", "enter")
			golden(t, fmt.Sprintf("detail_%dx%d.golden", w, hgt), h.plain())
		})
	}
}

func TestResultKinds(t *testing.T) {
	st := newTestStyles()
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	tool := model.ToolInfo{Ref: trust.Ref{Server: "s", Tool: "t"}, OutputSchema: schema}
	size := int64(2048)
	ok := &mcp.CallToolResult{
		Content: []mcp.Content{
			&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 1234)},
			&mcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 1)},
			&mcp.ResourceLink{URI: "file:///x\x1b[2J", Name: "x", MIMEType: "text/plain", Size: &size},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://r", MIMEType: "text/plain", Text: "inside\nresource"}},
		},
		StructuredContent: map[string]any{"n": 3},
	}
	// What the session's check (Manager.Call) found is what the screen says: a
	// result it returned checked matches the tool's output schema.
	plain := ansi.Strip(result.Content(st, result.New(tool, json.RawMessage(`{}`), &result.Outcome{CallID: "c9", Result: ok, Checked: true}, nil), 80))
	screenHas(t, plain, "✓ OK", "[image] image/png, 1234 bytes (not drawn; s saves it)", "[audio] audio/wav, 1 byte (not played; s saves it)",
		"[resource link] file:///x⟨ESC⟩[2J", "type: text/plain, 2048 bytes", "[embedded resource] mem://r", "│ inside\n│ resource")

	ok.StructuredContent = map[string]any{"n": "not a number"}
	mismatch := fmt.Errorf("calling s__t: %w: n: expected integer, got string", model.ErrResultSchema)
	plain = ansi.Strip(result.Content(st, result.New(tool, json.RawMessage(`{}`), &result.Outcome{CallID: "c9", Result: ok}, mismatch), 80))
	screenHas(t, plain, "✗ RESULT INVALID", "[image] image/png, 1234 bytes (not drawn; s saves it)", `"n": "not a number"`,
		"✗ does NOT match the tool's output schema", "expected integer, got string")
	if strings.Contains(plain, "✓") || strings.Contains(plain, "FAILED") {
		t.Errorf("a result that does not match its output schema reads as valid, or as a call that did not complete:\n%s", plain)
	}

	ok.StructuredContent = map[string]any{"n": 3}
	plain = ansi.Strip(result.Content(st, result.New(tool, nil, &result.Outcome{Result: ok, Checked: true}, nil), 80))
	screenHas(t, plain, "✓ matches the tool's output schema")

	ok.StructuredContent = nil
	none := fmt.Errorf("calling s__t: %w: the tool declares an output schema but returned no structured content", model.ErrResultSchema)
	plain = ansi.Strip(result.Content(st, result.New(tool, nil, &result.Outcome{Result: ok}, none), 80))
	screenHas(t, plain, "declares an output schema but returned no structured content")

	isErr := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "disk full"}}}
	plain = ansi.Strip(result.Content(st, result.New(tool, nil, &result.Outcome{Result: isErr}, nil), 80))
	screenHas(t, plain, "✗ TOOL ERROR — the tool reported an error (isError)", "│ disk full")
	if strings.Contains(plain, "✓") || strings.Contains(plain, "output schema") {
		t.Errorf("a tool error reads like success or is schema-checked:\n%s", plain)
	}

	denied := &model.DeniedError{Verdict: trust.Verdict{Action: trust.Deny, By: trust.DecidedByPolicy, Reasons: []string{"server x is blocked"}}}
	plain = ansi.Strip(result.Content(st, result.New(tool, nil, nil, denied), 80))
	screenHas(t, plain, "⊘ DENIED — the call did not run", "call denied by policy: server x is blocked", "decided: denied by policy")

	plain = ansi.Strip(result.Content(st, result.New(tool, nil, nil, errors.New("calling s__t: boom\x07")), 80))
	screenHas(t, plain, "✗ FAILED — the call did not complete", "│ calling s__t: boom⟨BEL⟩")
}

func TestBackgroundColorPicksTheTheme(t *testing.T) {
	h := newHarness(t, 80, 24, false)
	if !h.m.St.Dark {
		t.Fatal("the theme does not start dark")
	}
	h.send(tea.BackgroundColorMsg{Color: color.White})
	if h.m.St.Dark || h.m.tools.St.Dark || h.m.servers.St.Dark || h.m.detail.St.Dark {
		t.Error("a white background left a dark theme somewhere")
	}
	if !h.m.St.NoColor {
		t.Error("switching to light turned colour back on")
	}
}

func newTestStyles() *theme.Styles {
	st := theme.New(true, true)
	return &st
}

// TestRunDrawsAndQuits runs the real program over a pipe: it draws the session in
// the alternate screen and returns nil when the person presses q.
func TestRunDrawsAndQuits(t *testing.T) {
	sess, _ := newDemo(t)
	in, w := io.Pipe()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), sess, Options{Title: "demo", Input: in, Output: &out,
			ProgramOptions: []tea.ProgramOption{tea.WithWindowSize(80, 24), tea.WithoutSignals()}})
	}()
	time.Sleep(300 * time.Millisecond)
	if _, err := w.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after q")
	}
	screenHas(t, out.String(), "\x1b[?1049h", "LETHAL TRIFECTA", "mail__send_email")
}

// A server that needs OAuth login says so on the status line and puts the URL in the
// logs, escaped.
func TestAuthorizationRequestedShown(t *testing.T) {
	h := newHarness(t, 80, 24, false)
	h.send(eventMsg{model.AuthorizationRequested{Server: "remote", URL: "https://auth.example.com/authorize?x=1\x1b[2J"}})
	screen := h.plain()
	if !strings.Contains(screen, "remote needs you to log in") {
		t.Errorf("status line does not ask for the login:\n%s", screen)
	}
	h.keys("l")
	screen = h.plain()
	if !strings.Contains(screen, "https://auth.example.com/authorize?x=1⟨ESC⟩[2J") {
		t.Errorf("logs do not show the escaped URL:\n%s", screen)
	}
}

// TestDetailShowsEnvNames: the tool detail names the environment variables its stdio
// server receives (names only, escaped), and says nothing for other servers.
func TestDetailShowsEnvNames(t *testing.T) {
	st := newTestStyles()
	tool := model.ToolInfo{Ref: trust.Ref{Server: "s", Tool: "t"}, Facts: &model.ServerFacts{Env: []string{"HOME", "PATH", "X\x1b[2J"}}}
	plain := ansi.Strip(detail.DetailContent(st, tool, detail.ServedNameOf(nil, &tool), trust.Verdict{}, nil, false, 100))
	screenHas(t, plain, "env       HOME PATH X⟨ESC⟩[2J")
	tool.Facts = nil
	if plain := ansi.Strip(detail.DetailContent(st, tool, detail.ServedNameOf(nil, &tool), trust.Verdict{}, nil, false, 100)); strings.Contains(plain, "env  ") {
		t.Errorf("a server without a process shows an env line:\n%s", plain)
	}
}

// The TUI: A pins the definition the detail view showed. When the
// server serves another one by the time the person says yes (here: the view's
// definition is older than the server's), nothing is pinned and the status says why.
func TestAcceptBindsToTheDisplayedDefinition(t *testing.T) {
	h := rugPulledHarness(t)
	for i, n := range rowNames(h.m) {
		if n == "notes__create_note" {
			h.m.tools.Cursor = i
		}
	}
	h.keys("enter")
	screenHas(t, h.plain(), "✗ CHANGED since pinned", "A accept")
	shown := h.m.detail.Tool.Fingerprint
	h.m.detail.Tool.Fingerprint = strings.Repeat("0", 64) // what the person saw is not what is served
	h.keys("A")
	screenHas(t, h.plain(), "Pins sha256 000000000000")
	h.armQuestion()
	h.keys("right", "enter", "ctrl+y")
	h.waitFor("the refusal", func(m Model) bool { return strings.Contains(m.status, "changed again since it was reviewed") })
	if tl, _ := h.m.snap.Tool("notes", "create_note"); tl.Pin != trust.PinChanged || tl.Fingerprint != shown {
		t.Errorf("create_note pin %v after a refused accept", tl.Pin)
	}
}
