package ui

// The team policy on the TUI's screens: a real session.Manager over in-process
// servers, its config tightened by a managed policy, driven at the Update level.

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/internal/keytest"
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
