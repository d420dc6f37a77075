package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agentCheck is a check --snapshot run (nothing connects) of a config whose
// gateway listens on 127.0.0.1:7979 and whose approval_timeout is approval, with HOME
// at home, the current folder at cwd and env on top.
type agentCheck struct {
	t         *testing.T
	dir       string
	home, cwd string
	cfg, snap string
}

func newAgentCheck(t *testing.T, approval string) *agentCheck {
	t.Helper()
	dir := t.TempDir()
	a := &agentCheck{t: t, dir: dir, home: filepath.Join(dir, "home"), cwd: filepath.Join(dir, "project"),
		cfg: filepath.Join(dir, "airlock.toml"), snap: filepath.Join(dir, "snap.json")}
	for _, d := range []string{a.home, a.cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "[policy]\napproval_timeout = \"" + approval + "\"\n\n[gateway]\nlisten = \"127.0.0.1:7979\"\n\n[servers.docs]\ncommand = \"airlock\"\nargs = [\"demo-server\", \"docs\"]\ntrust = \"trusted\"\n"
	if err := os.WriteFile(a.cfg, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := a.run(nil, "snapshot", "--config", a.cfg, "-o", a.snap); r.code != 0 {
		t.Fatalf("snapshot: %d %s", r.code, r.stderr)
	}
	return a
}

// file writes a real file under the fake home or project.
func (a *agentCheck) file(path, body string) {
	a.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		a.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		a.t.Fatal(err)
	}
}

func (a *agentCheck) run(env []string, args ...string) result {
	a.t.Helper()
	cmd := asAirlock(a.t, []string{"HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "MCP_TOOL_TIMEOUT"},
		append([]string{"HOME=" + a.home, "XDG_STATE_HOME=" + filepath.Join(a.dir, "state"), "XDG_CONFIG_HOME=" + filepath.Join(a.dir, "none")}, env...), args...)
	cmd.Dir = a.cwd
	return runResult(a.t, cmd)
}

// warnings runs check --format json and returns its warnings.
func (a *agentCheck) warnings(env ...string) []string {
	a.t.Helper()
	r := a.run(env, "check", "--config", a.cfg, "--snapshot", a.snap, "--format", "json")
	if r.code != 0 {
		a.t.Fatalf("check exit %d (a warning must not change it): %s", r.code, r.stderr)
	}
	var rep struct {
		Warnings []struct {
			Message  string
			Location *location
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		a.t.Fatalf("%v: %s", err, r.stdout)
	}
	var out []string
	for _, w := range rep.Warnings {
		if w.Location == nil || w.Location.File != a.cfg || w.Location.Line != 2 {
			a.t.Errorf("warning at %+v, want %s line 2 (approval_timeout)", w.Location, a.cfg)
		}
		out = append(out, w.Message)
	}
	return out
}

// An approval_timeout beyond what an agent lets a call take makes the agent report
// its own timeout, not the person's answer: check says so for each agent whose
// config points at airlock, from that agent's own file and its own setting.
func TestCheck_WarnsWhenApprovalTimeoutExceedsAnAgentsLimit(t *testing.T) {
	a := newAgentCheck(t, "15m")
	if w := a.warnings(); len(w) != 0 {
		t.Fatalf("no agent config, warnings %q", w)
	}

	// Codex CLI, default limit: the warning of the agent's own figure and setting.
	a.file(filepath.Join(a.home, ".codex", "config.toml"), "model = \"o3\"\n\n[mcp_servers.airlock]\nurl = \"http://127.0.0.1:7979/mcp\"\n\n[mcp_servers.other]\nurl = \"http://127.0.0.1:9999/mcp\"\n")
	w := a.warnings()
	want := "approval_timeout 15m exceeds Codex CLI's tool timeout of 300 s (~/.codex/config.toml, entry airlock: tool_timeout_sec unset): Codex CLI reports its own timeout, not your answer; set approval_timeout ≤ 5m or tool_timeout_sec = 960"
	if len(w) != 1 || w[0] != want {
		t.Fatalf("warnings %q, want [%q]", w, want)
	}
	// Every format says it, and the exit code stays.
	for format, part := range map[string]string{
		"text":     "warning: " + want,
		"sarif":    `"ruleId": "agent-timeout"`,
		"junit":    "warning: approval_timeout 15m exceeds Codex CLI",
		"github":   "::warning file=",
		"markdown": "## Warnings (1)",
		"mermaid":  "%% warning: approval_timeout 15m exceeds Codex CLI",
	} {
		r := a.run(nil, "check", "--config", a.cfg, "--snapshot", a.snap, "--format", format)
		if r.code != 0 || !strings.Contains(r.stdout, part) {
			t.Errorf("--format %s: exit %d, want 0 and %q in:\n%s", format, r.code, part, r.stdout)
		}
	}
	// Raised for airlock's entry: no warning.
	a.file(filepath.Join(a.home, ".codex", "config.toml"), "[mcp_servers.airlock]\nurl = \"http://localhost:7979/mcp\"\ntool_timeout_sec = 1200\n")
	if w := a.warnings(); len(w) != 0 {
		t.Fatalf("tool_timeout_sec 1200 s > 15m, warnings %q", w)
	}
	// CODEX_HOME is where Codex reads its config, not ~/.codex.
	codexHome := filepath.Join(a.dir, "codexhome")
	a.file(filepath.Join(codexHome, "config.toml"), "[mcp_servers.gate]\ncommand = \"/opt/bin/airlock\"\nargs = [\"bridge\", \"--config\", \"x.toml\"]\ntool_timeout_sec = 90.5\n")
	w = a.warnings("CODEX_HOME=" + codexHome)
	if len(w) != 1 || !strings.Contains(w[0], "tool timeout of 90 s ("+filepath.Join(codexHome, "config.toml")+", entry gate: tool_timeout_sec = 90)") {
		t.Fatalf("CODEX_HOME's bridge entry: warnings %q", w)
	}
	if err := os.RemoveAll(filepath.Join(a.home, ".codex")); err != nil {
		t.Fatal(err)
	}

	// Gemini CLI: settings.json with comments, an httpUrl entry, default 10 min.
	a.file(filepath.Join(a.home, ".gemini", "settings.json"), "{\n  // airlock\n  \"mcpServers\": {\n    \"airlock\": {\"httpUrl\": \"http://127.0.0.1:7979/mcp\"},\n    \"elsewhere\": {\"command\": \"npx\", \"args\": [\"bridge\"]},\n  }\n}\n")
	w = a.warnings()
	if len(w) != 1 || !strings.Contains(w[0], "exceeds Gemini CLI's tool timeout of 600000 ms (10m) (~/.gemini/settings.json, entry airlock: \"timeout\" unset)") || !strings.HasSuffix(w[0], `set approval_timeout ≤ 10m or "timeout" = 960000`) {
		t.Fatalf("Gemini: warnings %q", w)
	}
	// The project's settings.json, with a timeout long enough: no warning from it.
	a.file(filepath.Join(a.cwd, ".gemini", "settings.json"), `{"mcpServers": {"airlock": {"url": "http://[::1]:7979/mcp", "timeout": 3600000}}}`)
	if w := a.warnings(); len(w) != 1 {
		t.Fatalf("the project's long timeout added a warning: %q", w)
	}
	// A malformed file is a warning that says so, never a crash or another exit.
	a.file(filepath.Join(a.home, ".gemini", "settings.json"), `{"mcpServers": {"airlock": `)
	w = a.warnings()
	if len(w) != 1 || !strings.HasPrefix(w[0], "agent config: Gemini CLI: cannot read ~/.gemini/settings.json: ") || !strings.HasSuffix(w[0], "its timeout for airlock's entries is not known") {
		t.Fatalf("malformed settings.json: warnings %q", w)
	}
	if err := os.RemoveAll(filepath.Join(a.home, ".gemini")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(a.cwd, ".gemini")); err != nil {
		t.Fatal(err)
	}

	// Claude Code: its default (100000000 ms) is far above 15m; a per-server
	// timeout below approval_timeout is what ends the call.
	a.file(filepath.Join(a.cwd, ".mcp.json"), `{"mcpServers": {"airlock": {"type": "http", "url": "http://127.0.0.1:7979/mcp"}}}`)
	if w := a.warnings(); len(w) != 0 {
		t.Fatalf("Claude Code at its default: warnings %q", w)
	}
	a.file(filepath.Join(a.home, ".claude.json"), `{"numStartups": 3, "projects": {"`+a.cwd+`": {"mcpServers": {"airlock": {"command": "airlock", "args": ["bridge"], "timeout": 60000}}}}, "mcpServers": {"web": {"url": "https://example.com/mcp", "timeout": 1000}}}`)
	w = a.warnings()
	if len(w) != 1 || !strings.Contains(w[0], "exceeds Claude Code's tool timeout of 60000 ms (1m) (~/.claude.json, entry projects."+a.cwd+".airlock: \"timeout\" = 60000)") {
		t.Fatalf("Claude Code's per-server timeout: warnings %q", w)
	}
	// CLAUDE_CONFIG_DIR moves .claude.json.
	w = a.warnings("CLAUDE_CONFIG_DIR=" + filepath.Join(a.dir, "nowhere"))
	if len(w) != 0 {
		t.Fatalf("with CLAUDE_CONFIG_DIR elsewhere, ~/.claude.json was read: %q", w)
	}
	// Unreadable: a directory where the file should be.
	if err := os.Remove(filepath.Join(a.cwd, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(a.cwd, ".mcp.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	w = a.warnings()
	if len(w) != 2 || !strings.HasPrefix(w[0], "agent config: Claude Code: cannot read "+filepath.Join(a.cwd, ".mcp.json")) {
		t.Fatalf("unreadable .mcp.json: warnings %q", w)
	}
}

// Under the agents' limits, nothing is said.
func TestCheck_NoAgentWarningWithinTheLimits(t *testing.T) {
	a := newAgentCheck(t, "2m")
	a.file(filepath.Join(a.home, ".codex", "config.toml"), "[mcp_servers.airlock]\nurl = \"http://127.0.0.1:7979/mcp\"\n")
	a.file(filepath.Join(a.home, ".gemini", "settings.json"), `{"mcpServers": {"airlock": {"httpUrl": "http://127.0.0.1:7979/mcp"}}}`)
	a.file(filepath.Join(a.home, ".claude.json"), `{"mcpServers": {"airlock": {"type": "http", "url": "http://127.0.0.1:7979/mcp"}}}`)
	if w := a.warnings(); len(w) != 0 {
		t.Fatalf("approval_timeout 2m within every limit, warnings %q", w)
	}
	r := a.run(nil, "check", "--config", a.cfg, "--snapshot", a.snap)
	if r.code != 0 || strings.Contains(r.stdout, "warning:") {
		t.Fatalf("text: exit %d\n%s", r.code, r.stdout)
	}
}

// A cloned project's .mcp.json is not the person's: an entry name with terminal
// controls reaches no output raw.
func TestCheck_AgentWarningEscapesTheEntryName(t *testing.T) {
	a := newAgentCheck(t, "15m")
	a.file(filepath.Join(a.cwd, ".mcp.json"), `{"mcpServers": {"air\u001b[2J\u009block": {"url": "http://127.0.0.1:7979/mcp", "timeout": 5000}}}`)
	for _, format := range []string{"text", "sarif", "junit", "github", "markdown", "mermaid"} {
		r := a.run(nil, "check", "--config", a.cfg, "--snapshot", a.snap, "--format", format)
		if r.code != 0 || !strings.Contains(r.stdout, "Claude Code") || strings.ContainsAny(r.stdout, "\x1b\u009b") {
			t.Errorf("--format %s: exit %d, a raw control or no warning in:\n%q", format, r.code, r.stdout)
		}
	}
}
