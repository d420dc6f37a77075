package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/session/config"
)

// airlock import prints a config that loads, with the secret out and the summary on
// stderr.
func TestImportCommand(t *testing.T) {
	r := airlock(t, "", "import", "../../testdata/import/cursor/.cursor/mcp.json")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for _, secret := range []string{"ctx7sk-fake-0123456789abcdef", "sk-ak-FAKE0123456789abcdefABCDEF", "fake-key-not-real-123"} {
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Errorf("secret %q printed", secret)
		}
	}
	if !strings.Contains(r.stderr, "imported 5 servers from Cursor; export CONTEXT7_API_KEY, MY_SERVER_2_API_KEY, ZAPIER_URL_SECRET") {
		t.Errorf("stderr: %s", r.stderr)
	}
	env := func(name string) (string, bool) {
		if name == "HOME" || name == "XDG_STATE_HOME" {
			return "/tmp", true
		}
		return "set", true
	}
	c, err := config.Parse([]byte(r.stdout), "out.toml", env)
	if err != nil {
		t.Fatalf("output does not load: %v", err)
	}
	if len(c.Servers) != 5 {
		t.Errorf("%d servers", len(c.Servers))
	}

	if r := airlock(t, "", "import", "a", "b"); r.code != 2 || !strings.Contains(r.stderr, "usage: airlock import [FILE]") {
		t.Errorf("two files: exit %d, stderr %s", r.code, r.stderr)
	}
	if r := airlock(t, "", "import", "/nonexistent/mcp.json"); r.code != 1 || !strings.Contains(r.stderr, "no such file") {
		t.Errorf("missing file: exit %d, stderr %s", r.code, r.stderr)
	}
}

// airlock --from runs the session on another client's file directly: its servers
// connect, all untrusted, with the file's secret passed to the server in memory.
func TestFromRunsImportedServers(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "claude_desktop_config.json")
	if err := os.WriteFile(src, []byte(`{"mcpServers": {
		"Docs": {"command": "airlock", "args": ["demo-server", "docs"], "env": {"DOCS_TOKEN": "ghp_notarealtoken0123456789abcdef"}},
		"mail": {"command": "airlock", "args": ["demo-server", "mail"]}
	}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := airlock(t, "", "check", "--from", src, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	var got checkJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Servers) != 2 || got.Servers[0].Name != "docs" || got.Servers[1].Name != "mail" {
		t.Fatalf("servers %+v", got.Servers)
	}
	for _, s := range got.Servers {
		if s.Status != "ready" || s.Trust != "untrusted" {
			t.Errorf("server %s: %s, %s; want ready, untrusted", s.Name, s.Status, s.Trust)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "ghp_notarealtoken") {
		t.Errorf("secret printed")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files written next to the source: %v", entries)
	}

	if r := airlock(t, "", "--from", src, "--config", "x.toml", "--no-tui"); r.code != 1 || !strings.Contains(r.stderr, "cannot be used together") {
		t.Errorf("--from with --config: exit %d, stderr %s", r.code, r.stderr)
	}
	unset := filepath.Join(dir, ".mcp.json")
	os.WriteFile(unset, []byte(`{"mcpServers": {"a": {"command": "x", "env": {"K": "${AIRLOCK_TEST_UNSET_VAR}"}}}}`), 0o600)
	if r := airlock(t, "", "--from", unset, "--no-tui"); r.code != 1 || !strings.Contains(r.stderr, "AIRLOCK_TEST_UNSET_VAR is not set") || !strings.Contains(r.stderr, "airlock import") {
		t.Errorf("unset variable: exit %d, stderr %s", r.code, r.stderr)
	}
}

// runIn runs airlock with HOME set to home (and no other client folders) in dir.
func runIn(t *testing.T, dir, home string, args ...string) result {
	t.Helper()
	cmd := asAirlock(t, []string{"HOME", "XDG_CONFIG_HOME", "CODEX_HOME"}, []string{"HOME=" + home, "XDG_STATE_HOME=" + t.TempDir()}, args...)
	cmd.Dir = dir
	return runResult(t, cmd)
}

// airlock import with no file finds the clients' standard files, says
// which it read and what else it found, and where it looked when it found none.
func TestImportDiscoversClientConfigs(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	r := runIn(t, dir, home, "import")
	if r.code != 1 || !strings.Contains(r.stderr, "no MCP server list found; looked for:") {
		t.Fatalf("nothing to find: exit %d, stderr %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"Claude Code (this folder) " + filepath.Join(dir, ".mcp.json"),
		"Claude Desktop " + filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"),
		"Cursor " + filepath.Join(home, ".cursor", "mcp.json"),
		"VS Code " + filepath.Join(home, ".config", "Code", "User", "mcp.json"),
		"Codex " + filepath.Join(home, ".codex", "config.toml"),
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("looked-for list lacks %q:\n%s", want, r.stderr)
		}
	}

	cursor := filepath.Join(home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(cursor), 0o700)
	src, err := os.ReadFile("../../testdata/import/cursor/.cursor/mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(cursor, src, 0o600)
	codex := filepath.Join(home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(codex), 0o700)
	os.WriteFile(codex, []byte("[mcp_servers.a]\ncommand = \"a\"\n"), 0o600)
	r = runIn(t, dir, home, "import")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		"airlock: read Cursor " + cursor,
		"airlock: also found Codex " + codex + " (1 server)",
		"imported 5 servers from Cursor",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "ctx7sk-fake-0123456789abcdef") {
		t.Error("secret printed")
	}
	if _, err := config.Parse([]byte(r.stdout), "out.toml", func(string) (string, bool) { return "/set", true }); err != nil {
		t.Errorf("output does not load: %v", err)
	}
}
