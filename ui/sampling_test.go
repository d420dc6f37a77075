package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/question"
	"github.com/airlock-mcp/airlock/ui/screens/detail"
)

// An agent's call makes its server ask for a completion: the question reaches the
// person in the overlay (never the agent), keys typed while it arms are ignored,
// and the reply written by hand is what the server gets.
func TestSampling_AgentCallsSamplingQuestionAnsweredByHand(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sampler", Version: "1"}, nil)
	got := make(chan string, 1)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			//lint:ignore SA1019 testing a deprecated feature airlock supports
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 3, SystemPrompt: "sys \x1b]0;x\a", Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "question?"}}}})
			if err != nil {
				got <- "error: " + err.Error()
				return nil, nil, err
			}
			tc, _ := res.Content.(*mcp.TextContent)
			got <- tc.Text
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	cfg := &config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute, Servers: []config.Server{
		{Name: "sampler", Trust: trust.Untrusted, ConnectTimeout: 10 * time.Second, CallTimeout: time.Minute,
			Tools: map[string]config.Tool{"ask": {Policy: trust.Allow}}},
	}}
	sess := startManager(t, cfg, map[string]*mcp.Server{"sampler": srv})
	h := newHarnessFor(t, sess, 100, 30, true, Options{})
	done := agentCall(context.Background(), sess, "sampler__ask", `{}`)
	h.waitFor("the sampling question", func(m Model) bool { return m.q.Count(question.KindSampling) == 1 })
	h.advance(question.MinQuiet)
	h.send(h.m.q.PendingTick())
	if !h.m.q.Open() || h.m.q.Armed() {
		t.Fatalf("open %v armed %v, want open and arming", h.m.q.Open(), h.m.q.Armed())
	}
	h.typeText("early")
	h.send(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	stillPending(t, done, "keys while the sampling question arms")
	screenHas(t, h.plain(), "sampler", "untrusted", "asks for an LLM completion", "question?", "sys ⟨ESC⟩]0;x⟨BEL⟩")
	if strings.Contains(h.plain(), "early") {
		t.Fatalf("keys typed while arming reached the reply:\n%s", h.plain())
	}
	h.armQuestion()
	h.typeText("by hand")
	h.send(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	select {
	case s := <-got:
		if s != "by hand" {
			t.Errorf("the server got %q, want the reply written by hand", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the reply never reached the server:\n%s", h.plain())
	}
	if err := outcome(t, done); err != nil {
		t.Errorf("the agent's call: %v", err)
	}
}

// The tool detail shows its server's roots and the deprecated features it used.
func TestDetailShowsRootsAndDeprecated(t *testing.T) {
	st := newTestStyles()
	tool := model.ToolInfo{Ref: trust.Ref{Server: "s", Tool: "t"}, Facts: &model.ServerFacts{Roots: []string{"file:///home/u/project", "file:///tmp/x%1B"}, Deprecated: []string{"roots", "sampling"}}}
	plain := ansi.Strip(detail.DetailContent(st, tool, detail.ServedNameOf(nil, &tool), trust.Verdict{}, nil, false, 100))
	screenHas(t, plain, "roots     file:///home/u/project file:///tmp/x%1B", "uses      roots, sampling  (deprecated by the 2026-07-28 spec)")
	tool.Facts = nil
	if plain := ansi.Strip(detail.DetailContent(st, tool, detail.ServedNameOf(nil, &tool), trust.Verdict{}, nil, false, 100)); strings.Contains(plain, "roots  ") || strings.Contains(plain, "uses  ") {
		t.Errorf("a server without roots shows a roots line:\n%s", plain)
	}
}
