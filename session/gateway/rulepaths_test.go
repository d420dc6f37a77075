package gateway_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/trust"
)

// A write through a link and "..": with allow ~/project/** and project/cfg -> ../.ssh,
// ~/project/cfg/../.bashrc is ~/.bashrc to the operating system (".." applies after
// the link), so the allow rule is set aside and the call asks; nobody answers, and
// ~/.bashrc is unchanged. The question says why the rule was set aside. A write
// inside the project still runs unasked.
func TestRulePaths_LinkThenDotDotAsks(t *testing.T) {
	home := sessiontest.LinkHome(t)
	allow := sessiontest.PathRule(t, "servers.fs.tools.write_file.rules[0]", trust.Allow, home, map[string][2]any{"path": {trust.MatchGlob, "~/project/**"}})
	m, a := sessiontest.PathFSManager(t, map[string][]trust.Rule{"write_file": {allow}})

	out, err := sessiontest.CallPath(m, "write_file", map[string]string{"path": filepath.Join(home, "project", "new.txt"), "content": "hello"})
	if err != nil || out.Verdict.By != trust.DecidedByRule {
		t.Fatalf("a write inside the project: %v %+v", err, out)
	}
	if got := sessiontest.FileText(t, filepath.Join(home, "project", "new.txt")); got != "hello" {
		t.Fatalf("the server wrote %q inside the project", got)
	}

	raw := filepath.Join(home, "project", "cfg") + "/../.bashrc"
	_, err = sessiontest.CallPath(m, "write_file", map[string]string{"path": raw, "content": "pwned"})
	var denied *model.DeniedError
	if !errors.As(err, &denied) || denied.Verdict.By != trust.DecidedByTimeout {
		t.Fatalf("a write to %s: %v, want a question nobody answered", raw, err)
	}
	if got := sessiontest.FileText(t, filepath.Join(home, ".bashrc")); got != "original bashrc\n" {
		t.Errorf("~/.bashrc is now %q", got)
	}
	select {
	case p := <-a.Seen:
		reasons := strings.Join(p.Verdict.Reasons, "\n")
		t.Logf("reasons:\n%s", reasons)
		if !strings.Contains(reasons, "servers.fs.tools.write_file.rules[0]") || !strings.Contains(reasons, "~/project/cfg is a link to ~/.ssh") {
			t.Errorf("the question's reasons do not say why the allow rule was set aside:\n%s", reasons)
		}
	default:
		t.Error("no question was asked")
	}
}

// A deny through a link: with deny **/.ssh/** on a read tool, ~/project/cfg/id_rsa
// is ~/.ssh/id_rsa to the operating system: denied by the rule, the key never read.
func TestRulePaths_DenyThroughALink(t *testing.T) {
	home := sessiontest.LinkHome(t)
	deny := sessiontest.PathRule(t, "servers.fs.tools.read_file.rules[0]", trust.Deny, home, map[string][2]any{"path": {trust.MatchGlob, "**/.ssh/**"}})
	m, _ := sessiontest.PathFSManager(t, map[string][]trust.Rule{"read_file": {deny}})

	out, err := sessiontest.CallPath(m, "read_file", map[string]string{"path": filepath.Join(home, "project", "notes.txt")})
	if err != nil || sessiontest.TextOf(out.Result) != "notes\n" {
		t.Fatalf("a read inside the project: %v %+v", err, out)
	}
	out, err = sessiontest.CallPath(m, "read_file", map[string]string{"path": filepath.Join(home, "project", "cfg", "id_rsa")})
	var denied *model.DeniedError
	if !errors.As(err, &denied) || denied.Verdict.By != trust.DecidedByRule || denied.Rule == "" {
		got := ""
		if out != nil {
			got = sessiontest.TextOf(out.Result)
		}
		t.Fatalf("a read of ~/project/cfg/id_rsa: %v (read %q), want denied by the rule", err, got)
	}
}

// A matching deny is final: allow { path = "~/**", content = { max = 100000 } } has
// more conditions than deny **/.ssh/**, and still ~/.ssh/authorized_keys is denied
// and never written.
func TestRulePaths_DenyOutranksAMoreSpecificAllow(t *testing.T) {
	home := sessiontest.LinkHome(t)
	allow := sessiontest.PathRule(t, "servers.fs.tools.write_file.rules[0]", trust.Allow, home, map[string][2]any{"path": {trust.MatchGlob, "~/**"}, "content": {trust.MatchMax, int64(100000)}})
	deny := sessiontest.PathRule(t, "servers.fs.tools.write_file.rules[1]", trust.Deny, home, map[string][2]any{"path": {trust.MatchGlob, "**/.ssh/**"}})
	m, _ := sessiontest.PathFSManager(t, map[string][]trust.Rule{"write_file": {allow, deny}})

	if out, err := sessiontest.CallPath(m, "write_file", map[string]string{"path": filepath.Join(home, "a.txt"), "content": "x"}); err != nil || out.Verdict.By != trust.DecidedByRule {
		t.Fatalf("a write under ~: %v %+v", err, out)
	}
	keys := filepath.Join(home, ".ssh", "authorized_keys")
	_, err := sessiontest.CallPath(m, "write_file", map[string]string{"path": keys, "content": "ssh-ed25519 AAAA attacker"})
	var denied *model.DeniedError
	if !errors.As(err, &denied) || denied.Verdict.By != trust.DecidedByRule || !strings.Contains(denied.Rule, "rules[1]") {
		t.Errorf("a write to ~/.ssh/authorized_keys: %v, want denied by rules[1]", err)
	}
	if got := sessiontest.FileText(t, keys); got != "" {
		t.Errorf("authorized_keys was written: %q", got)
	}
}

// The same two breaks from an agent through the gateway: the write through the
// link and ".." asks (nobody answers: a tool error, ~/.bashrc unchanged), and the
// read of the key through the link is denied by the rule, named to the agent.
func TestRulePaths_GatewayAgentThroughALink(t *testing.T) {
	home := sessiontest.LinkHome(t)
	allow := sessiontest.PathRule(t, "servers.fs.tools.write_file.rules[0]", trust.Allow, home, map[string][2]any{"path": {trust.MatchGlob, "~/project/**"}})
	deny := sessiontest.PathRule(t, "servers.fs.tools.read_file.rules[0]", trust.Deny, home, map[string][2]any{"path": {trust.MatchGlob, "**/.ssh/**"}})
	m, _ := sessiontest.PathFSManager(t, map[string][]trust.Rule{"write_file": {allow}, "read_file": {deny}})
	cs := agent(t, startGateway(t, m), nil)
	call := func(tool string, args map[string]any) (*mcp.CallToolResult, string) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fs__" + tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res, resultText(res)
	}
	if res, text := call("write_file", map[string]any{"path": filepath.Join(home, "project", "ok.txt"), "content": "fine"}); res.IsError {
		t.Fatalf("a write inside the project: %s", text)
	}
	res, text := call("write_file", map[string]any{"path": filepath.Join(home, "project", "cfg") + "/../.bashrc", "content": "pwned"})
	if !res.IsError || !strings.Contains(text, "nobody answered") {
		t.Errorf("the write through the link: %q, want a question nobody answered", text)
	}
	if got := sessiontest.FileText(t, filepath.Join(home, ".bashrc")); got != "original bashrc\n" {
		t.Errorf("~/.bashrc is now %q", got)
	}
	res, text = call("read_file", map[string]any{"path": filepath.Join(home, "project", "cfg", "id_rsa")})
	if !res.IsError || !strings.Contains(text, "rule servers.fs.tools.read_file.rules[0] (config.toml:1) denies this call") || strings.Contains(text, "PRIVATE KEY") {
		t.Errorf("the read through the link: %q", text)
	}
}

// HOME itself reached through a link (as /var is on macOS): every path under it
// resolves to the link's target, and allow ~/project/** still allows a write inside
// the project (the rule's own folder is compared resolved too), while the write
// through project/cfg and ".." still asks.
func TestRulePaths_HomeThroughALink(t *testing.T) {
	home := sessiontest.LinkHome(t)
	via := filepath.Join(filepath.Dir(home), "homelink")
	if err := os.Symlink(home, via); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", via)
	allow := sessiontest.PathRule(t, "servers.fs.tools.write_file.rules[0]", trust.Allow, via, map[string][2]any{"path": {trust.MatchGlob, "~/project/**"}})
	m, _ := sessiontest.PathFSManager(t, map[string][]trust.Rule{"write_file": {allow}})
	out, err := sessiontest.CallPath(m, "write_file", map[string]string{"path": via + "/project/new.txt", "content": "hello"})
	if err != nil || out.Verdict.By != trust.DecidedByRule || out.Result.IsError {
		t.Fatalf("a write inside the project under a linked HOME: %v %+v", err, out)
	}
	if got := sessiontest.FileText(t, filepath.Join(home, "project", "new.txt")); got != "hello" {
		t.Fatalf("the server wrote %q", got)
	}
	_, err = sessiontest.CallPath(m, "write_file", map[string]string{"path": via + "/project/cfg/../.bashrc", "content": "pwned"})
	var denied *model.DeniedError
	if !errors.As(err, &denied) || denied.Verdict.By != trust.DecidedByTimeout {
		t.Fatalf("a write through the link: %v, want a question nobody answered", err)
	}
	if got := sessiontest.FileText(t, filepath.Join(home, ".bashrc")); got != "original bashrc\n" {
		t.Errorf("~/.bashrc is now %q", got)
	}
}
