package ui

// The team policy on the TUI's screens: a real session.Manager over in-process
// servers, its config tightened by a managed policy, driven at the Update level.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// policyPath is the name the policies of these tests are read as.
const policyPath = "/etc/airlock/policy.toml"

// policyHarness is repoHarness with a managed policy's text applied to the config;
// web is a second, trusted server whose trust the policy may lower.
func policyHarness(t *testing.T, policy string) (*harness, *repoServer) {
	t.Helper()
	r := &repoServer{}
	cfg := &config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute, Servers: []config.Server{
		{Name: "repo", Trust: trust.Trusted, ConnectTimeout: 10 * time.Second, CallTimeout: time.Minute,
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
