package ui

// The team policy on the TUI's screens: a real session.Manager over in-process
// servers, its config tightened by a managed policy, driven at the Update level.

import (
	"context"
	"fmt"
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

// What-if on a value the team policy holds: T steps only through the trusts the
// policy allows (blocked → untrusted, skipping trusted, asked first since it
// loosens); a tool's step the policy refuses asks nothing, says the policy's
// sentence on screen and changes nothing; a step that tightens takes one key.
func TestPolicy_WhatIfCannotLoosen(t *testing.T) {
	h, _ := policyHarness(t, "[servers.repo]\ntrust = \"untrusted\"\n[servers.repo.tools.write_note]\npolicy = \"deny\"\n")
	h.m.showTool(snapTool(t, h, "repo__write_note"))
	h.keys("esc") // back to the tools pane, on write_note
	if tl, ok := h.m.tools.SelectedTool(); !ok || tl.Ref.Qualified() != "repo__write_note" {
		t.Fatalf("selected %+v", tl.Ref)
	}
	h.keys("T") // untrusted → blocked: tightens, one key
	h.waitFor("repo to be blocked", func(m Model) bool { s, _ := m.snap.Server("repo"); return s.Trust == trust.BlockedServer })
	h.settle()  // the server's own news first
	h.keys("T") // blocked → untrusted: trusted is held away, so T skips it
	h.settle()
	if !frontIs(h.m, question.KindChoice) {
		t.Fatalf("T on blocked repo, held at untrusted, did not offer untrusted:\n%s", h.plain())
	}
	screenHas(t, flat(h.plain()), "Raise repo's trust to untrusted?", "trusted is skipped: policy: /etc/airlock/policy.toml:2")
	h.armQuestion()
	h.keys("right", "enter", "ctrl+y")
	h.waitFor("repo untrusted again", func(m Model) bool { s, _ := m.snap.Server("repo"); return s.Trust == trust.Untrusted })
	if _, changed := h.sess.Overrides().Trust["repo"]; changed {
		t.Errorf("back at the config's trust, a change is still kept: %+v", h.sess.Overrides().Trust)
	}
	h.settle() // the change's own status first, as a person reads it before the next key

	h.keys("p") // none → ask: the policy holds write_note at deny
	h.settle()
	if frontIs(h.m, question.KindChoice) {
		t.Fatalf("a what-if the policy refuses asked first:\n%s", h.plain())
	}
	if _, ok := h.sess.Overrides().Policy[trust.Ref{Server: "repo", Tool: "write_note"}]; ok {
		t.Fatal("the tool's policy changed")
	}
	const toolSentence = "the team policy holds repo__write_note at deny (policy: /etc/airlock/policy.toml:4)"
	if !strings.Contains(h.m.status, toolSentence) || !strings.HasPrefix(h.m.status, "⊘ nothing changed: ") {
		t.Errorf("status %q, want \"⊘ nothing changed: \" and %q", h.m.status, toolSentence)
	}
	screenHas(t, h.plain(), "⊘ nothing changed: the team policy holds repo__write_note")
}

// A server the policy holds at blocked: T has nowhere to step, says so and changes
// nothing; the refusal leads the status line, so that at 60 and 80 columns what
// happened and why is on screen (the rest is behind v).
func TestPolicy_HeldRefusalFitsNarrowScreens(t *testing.T) {
	h, _ := policyHarness(t, "[servers.repo]\ntrust = \"blocked\"\n")
	h.settle() // the server's own news first
	for _, w := range []int{60, 80} {
		h.send(tea.WindowSizeMsg{Width: w, Height: 20})
		h.keys("tab", "down") // the servers pane, on repo (below "all servers")
		if h.m.servers.Selected() != "repo" {
			t.Fatalf("selected server %q, want repo:\n%s", h.m.servers.Selected(), h.plain())
		}
		h.keys("T")
		h.settle()
		if frontIs(h.m, question.KindChoice) {
			t.Fatalf("T on a server the policy holds at blocked asked:\n%s", h.plain())
		}
		if s, _ := h.m.snap.Server("repo"); s.Trust != trust.BlockedServer {
			t.Fatalf("repo's trust changed to %v", s.Trust)
		}
		lines := strings.Split(h.plain(), "\n")
		status := lines[len(lines)-2]
		if !strings.HasPrefix(status, "⊘ nothing changed: the team policy holds") {
			t.Errorf("at %d columns the status line is %q", w, status)
		}
		if w >= 80 && !strings.Contains(status, "server repo at blocked") {
			t.Errorf("at %d columns the status line does not say what is held: %q", w, status)
		}
		h.keys("tab", "up")
	}
}

// A change the session refuses because the policy holds it (one the screen could
// not foresee) is said as the policy's sentence, not as a failure.
func TestPolicy_WhatIfRefusalIsThePolicysSentence(t *testing.T) {
	h, _ := policyHarness(t, "[servers.repo]\ntrust = \"untrusted\"\n")
	hold := h.sess.TrustHeld("repo", trust.Trusted)
	if hold == nil {
		t.Fatal("the session does not hold repo at untrusted")
	}
	h.m.applyWhatIf(whatIfMsg{what: "repo trust blocked → trusted", err: fmt.Errorf("changing trust: %w", hold)})
	const want = "⊘ nothing changed: the team policy holds server repo at untrusted (policy: /etc/airlock/policy.toml:2): a what-if cannot loosen it"
	if h.m.status != want {
		t.Errorf("status %q, want %q", h.m.status, want)
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
