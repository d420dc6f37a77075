//go:build unix

package main

import (
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/trust"
)

// An agent's call of a mirror's tool with a 64-byte dotted name, in the
// advertised 80x24 terminal: the dialog names the server with its whole trust
// word, the name the agent called on one row and the agent, above the
// arguments, with the buttons, and no scrolling.
func TestE2E_LongNamedCallShowsWhoAsksAt80x24(t *testing.T) {
	self := selfPath(t)
	const server = "github-enterprise-mirror"
	cfg := writeConfig(t, "[servers."+server+"]\ncommand = "+quoteTOML(self)+"\n[servers."+server+".env]\nAIRLOCK_TEST_NAMES_SERVER = \"long\"\n")
	var refs []trust.Ref
	for _, tool := range longTools {
		refs = append(refs, trust.Ref{Server: server, Tool: tool})
	}
	target := refs[2]
	if len(target.Tool) != 64 {
		t.Fatalf("the tool's name is %d bytes", len(target.Tool))
	}
	served, ok := trust.MapServedNames(refs, 0).Name(target)
	if !ok {
		t.Fatal("no served name")
	}
	addr := freeAddr(t)
	s := startScreen(t, "--config", cfg, "--gateway", addr)
	s.waitFor("1/1 ready · 3 tools") // the gateway serves the tools once listed
	cs := connectAgent(t, s, addr)
	done := agentCall(cs, served, map[string]any{"owner": "acme", "repo": "site", "path": "docs/README.md", "branch": "main", "message": "remove", "sha": "7d64"})
	s.waitFor("allow this call?")
	s.waitGone("arming", "allow this call?")
	screen := s.text()
	for _, want := range []string{"? untrusted", "agent   e2e-agent", "Deny", "Allow once", "the agent calls this "} {
		if !strings.Contains(screen, want) {
			t.Errorf("the dialog does not show %q without scrolling:\n%s", want, screen)
		}
	}
	for _, l := range strings.Split(screen, "\n") {
		if i := strings.Index(l, "the agent calls this "); i >= 0 {
			shown := strings.Fields(l[i+len("the agent calls this "):])[0]
			head, tail, _ := strings.Cut(shown, "…")
			if !strings.HasPrefix(served, head) || !strings.HasSuffix(served, tail) || len(tail) < 4 && shown != served {
				t.Errorf("the served name %q is shown as %q", served, shown)
			}
		}
	}
	s.keys(keyEsc)
	if r := <-done; r.err == nil && (r.res == nil || !r.res.IsError) {
		t.Fatalf("esc did not deny: %+v", r.res)
	}
}
