package ui

// The team policy on the TUI's screens: a real session.Manager over in-process
// servers, its config tightened by a managed policy, driven at the Update level.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/internal/keytest"
	"github.com/airlock-mcp/airlock/ui/question"
)

// policyPath is the name the policies of these tests are read as.
const policyPath = "/etc/airlock/policy.toml"

// policyHarness is repoHarness with a managed policy's text applied to the config;
// web is a second, trusted server whose trust the policy may lower.
func policyHarness(t *testing.T, policy string) (*harness, *repoServer) {
	return policyHarnessCmd(t, policy, "")
}

// policyHarnessCmd is policyHarness with the command line the config names for
// repo (what the policy's server patterns match; the server runs in-process).
func policyHarnessCmd(t *testing.T, policy, command string) (*harness, *repoServer) {
	t.Helper()
	r := &repoServer{}
	cfg := &config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute, Servers: []config.Server{
		{Name: "repo", Command: command, Trust: trust.Trusted, ConnectTimeout: 10 * time.Second, CallTimeout: time.Minute,
			Tools: map[string]config.Tool{"write_note": {Policy: trust.Allow}}},
	}}
	p, err := config.ParsePolicy([]byte(policy), policyPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	sess := startManager(t, cfg, map[string]*mcp.Server{"repo": r.server()})
	return newHarnessFor(t, sess, 100, 30, true, Options{SaveDir: t.TempDir()}), r
}

// A call the policy holds at ask, though the person's config allows the tool: the
// question offers Allow once and Deny only and names the policy's file and line;
// keys typed before it armed and every → then Enter and ctrl+y after allow this
// one call and grant nothing, so the next call asks again.
func TestPolicy_HeldQuestionAllowsOnlyOnce(t *testing.T) {
	h, r := policyHarness(t, "# team\n[servers.repo.tools.write_note]\npolicy = \"ask\"\n")
	done := agentCall(context.Background(), h.sess, "repo__write_note", `{"text":"x"}`)
	h.waitAsked(1)
	if p := h.sess.Engine().Pending()[0]; p.Held == "" {
		t.Fatalf("the engine did not hold the call: %+v", p)
	}
	h.keys("right", "right", "right", "right", "enter", "ctrl+y") // typed early
	stillPending(t, done, "keys typed before the question armed")
	h.armQuestion()
	v := flat(h.plain())
	for _, no := range []string{"Allow for this context", "Always allow", "Always deny"} {
		if strings.Contains(v, no) {
			t.Errorf("the held question offers %q:\n%s", no, h.plain())
		}
	}
	screenHas(t, h.plain(), "policy: /etc/airlock/policy.toml:3", "Allow once")
	h.keys("right", "right", "right", "right", "enter", "ctrl+y")
	if err := outcome(t, done); err != nil {
		t.Fatalf("allow once: %v", err)
	}
	if n := r.writes.Load(); n != 1 {
		t.Errorf("writes = %d, want 1", n)
	}
	if gs := h.sess.Engine().Grants(); len(gs) != 0 {
		t.Errorf("the held call left grants: %+v", gs)
	}
	next := agentCall(context.Background(), h.sess, "repo__write_note", `{"text":"y"}`)
	h.waitAsked(1)
	stillPending(t, next, "the next held call")
}

// snapTool is the tool server__name as the root's snapshot lists it.
func snapTool(t *testing.T, h *harness, ref string) model.ToolInfo {
	t.Helper()
	for _, ti := range h.m.snap.Tools {
		if ti.Ref.Qualified() == ref {
			return *ti
		}
	}
	t.Fatalf("no tool %s in the snapshot", ref)
	return model.ToolInfo{}
}

// A tool whose policy the managed file set: its details show the effective policy
// and the file and line that set it.
func TestPolicy_DetailNamesTheSource(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {60, 20}} {
		h, _ := policyHarness(t, "# team\n[servers.repo.tools.write_note]\npolicy = \"ask\"\n")
		h.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		h.m.showTool(snapTool(t, h, "repo__write_note"))
		if h.m.screen != screenDetail {
			t.Fatalf("showTool opened %v", h.m.screen)
		}
		screenHas(t, h.plain(), "policy    ask  (policy: /etc/airlock/policy.toml:3)")
		keytest.Fits(t, h.m.render(), size[0], size[1], "detail")
		if size[0] == 80 {
			golden(t, "detail_policy_80x24.golden", h.plain())
		}
	}
}

// A server whose trust the policy set shows it with the file and line; one the
// policy's server patterns block shows why.
func TestPolicy_ServerInfoNamesTheSource(t *testing.T) {
	h, _ := policyHarness(t, "[servers.repo]\ntrust = \"untrusted\"\n")
	h.m.openInfo("repo")
	if h.m.screen != screenInfo {
		t.Fatalf("openInfo opened %v", h.m.screen)
	}
	screenHas(t, h.plain(), "trust       ? untrusted  (policy: /etc/airlock/policy.toml:2)")
	keytest.Fits(t, h.m.render(), 100, 30, "info")
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	golden(t, "info_policy_80x24.golden", h.plain())

	b, _ := policyHarnessCmd(t, "denied_servers = [\"*curl*\"]\n", "/usr/bin/curl")
	b.m.openInfo("repo")
	screenHas(t, b.plain(), "server is blocked: the team policy denies it")
	screenHas(t, b.plain(), "trust       ⊘ blocked  (policy: /etc/airlock/policy.toml:1)")
}

// A tool the policy's rules decide before the person's: the details name them.
func TestPolicy_DetailNamesThePolicyRules(t *testing.T) {
	h, _ := policyHarness(t, "[[servers.repo.tools.write_note.rules]]\npolicy = \"ask\"\nwhen = { text = { equals = \"x\" } }\n")
	h.m.showTool(snapTool(t, h, "repo__write_note"))
	screenHas(t, h.plain(), "the team policy's rules decide first: /etc/airlock/policy.toml:1")
}

// What-if on a value the team policy holds: the step that would loosen it asks
// nothing, says the policy's sentence on screen, and changes nothing; a step that
// tightens still takes one key.
func TestPolicy_WhatIfCannotLoosen(t *testing.T) {
	h, _ := policyHarness(t, "[servers.repo]\ntrust = \"untrusted\"\n[servers.repo.tools.write_note]\npolicy = \"deny\"\n")
	h.m.showTool(snapTool(t, h, "repo__write_note"))
	h.keys("esc") // back to the tools pane, on write_note
	if tl, ok := h.m.tools.SelectedTool(); !ok || tl.Ref.Qualified() != "repo__write_note" {
		t.Fatalf("selected %+v", tl.Ref)
	}
	h.keys("T") // untrusted → blocked: tightens, one key
	h.waitFor("repo to be blocked", func(m Model) bool { s, _ := m.snap.Server("repo"); return s.Trust == trust.BlockedServer })
	h.settle()  // the server's own news first: the status line is then the refusal's
	h.keys("T") // blocked → trusted: the policy holds it at untrusted
	h.settle()
	if frontIs(h.m, question.KindChoice) {
		t.Fatalf("a what-if the policy refuses asked first:\n%s", h.plain())
	}
	if s, _ := h.m.snap.Server("repo"); s.Trust != trust.BlockedServer {
		t.Fatalf("repo's trust changed to %v", s.Trust)
	}
	const trustSentence = "policy: /etc/airlock/policy.toml:2 holds server repo at untrusted: a what-if cannot loosen it"
	if !strings.Contains(h.m.status, trustSentence) || strings.Contains(h.m.status, "could not change") {
		t.Errorf("status %q, want the policy's sentence %q", h.m.status, trustSentence)
	}
	screenHas(t, h.plain(), "⊘ policy: /etc/airlock/policy.toml:2 holds")

	h.keys("p") // none → ask: the policy holds write_note at deny
	h.settle()
	if frontIs(h.m, question.KindChoice) {
		t.Fatalf("a what-if the policy refuses asked first:\n%s", h.plain())
	}
	if _, ok := h.sess.Overrides().Policy[trust.Ref{Server: "repo", Tool: "write_note"}]; ok {
		t.Fatal("the tool's policy changed")
	}
	const toolSentence = "policy: /etc/airlock/policy.toml:4 holds repo__write_note at deny: a what-if cannot loosen it"
	if !strings.Contains(h.m.status, toolSentence) {
		t.Errorf("status %q, want %q", h.m.status, toolSentence)
	}
}

// A change the session refuses because the policy holds it (one the screen could
// not foresee) is said as the policy's sentence, not as a failure.
func TestPolicy_WhatIfRefusalIsThePolicysSentence(t *testing.T) {
	h, _ := policyHarness(t, "[servers.repo]\ntrust = \"untrusted\"\n")
	const why = "the team policy holds server repo at untrusted (policy: /etc/airlock/policy.toml:2): a what-if cannot loosen it"
	h.m.applyWhatIf(whatIfMsg{what: "repo trust blocked → trusted", err: errors.New(why)})
	if h.m.status != "⊘ "+why+"; nothing changed" {
		t.Errorf("status %q", h.m.status)
	}
}

// A call that asks because the policy's tier default asks: the question's "why"
// row names the policy's file and line.
func TestPolicy_TierAskNamedInWhy(t *testing.T) {
	h, _ := policyHarness(t, "# team\n\n[policy]\nwrite = \"ask\"\n")
	done := agentCall(context.Background(), h.sess, "repo__write_note", `{"text":"x"}`)
	h.waitAsked(1)
	h.armQuestion()
	screenHas(t, h.plain(), "why     policy: /etc/airlock/policy.toml:4 asks for every call")
	h.keys("esc")
	if err := outcome(t, done); err == nil {
		t.Error("esc allowed the call")
	}
}
