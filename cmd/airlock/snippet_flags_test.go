package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snippetIn runs `airlock gateway snippet ARGS` in folder dir and returns stdout.
func snippetIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := asAirlock(t, nil, stateEnv(dir), append([]string{"gateway", "snippet"}, args...)...)
	cmd.Dir = dir
	r := runResult(t, cmd)
	if r.code != 0 {
		t.Fatalf("snippet %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// A relative --config is made absolute in the export line as in the bridge line:
// the agent's shell need not start in the folder the snippet was printed in.
func TestGatewaySnippetEnv_TokenFlagsAbsolute(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte("state_dir = \""+filepath.ToSlash(filepath.Join(dir, "state"))+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(dir, "config.toml")
	for _, client := range []string{"claude", "codex", "gemini", "cursor", "vscode"} {
		out := snippetIn(t, dir, client, "--env", "--config", "config.toml")
		var export string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "airlock gateway token --export") {
				export = l
			}
		}
		if !strings.Contains(export, "--config '"+abs+"'") {
			t.Errorf("%s: export line %q, want --config '%s'", client, export, abs)
		}
	}
}

// Gemini's "timeout" follows approval_timeout as Codex's tool_timeout_sec does: its
// default, 600000 ms, or approval_timeout and a minute more when that is longer.
func TestGatewaySnippetGemini_TimeoutFollowsApproval(t *testing.T) {
	for approval, want := range map[string]float64{"2m": 600000, "9m30s": 630000, "15m": 960000} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "config.toml")
		body := "state_dir = \"" + filepath.ToSlash(filepath.Join(dir, "state")) + "\"\n[policy]\napproval_timeout = \"" + approval + "\"\n"
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, env := range []bool{false, true} {
			args := []string{"gemini", "--config", cfg}
			if env {
				args = append(args, "--env")
			}
			out := snippetIn(t, dir, args...)
			js := out[strings.Index(out, "\n{")+1:]
			js = js[:strings.Index(js, "\n}")+2]
			var block struct {
				MCPServers map[string]struct {
					Timeout float64 `json:"timeout"`
				} `json:"mcpServers"`
			}
			if err := json.Unmarshal([]byte(js), &block); err != nil {
				t.Fatalf("block: %v\n%s", err, out)
			}
			if got := block.MCPServers["airlock"].Timeout; got != want {
				t.Errorf("approval_timeout %s (env %v): \"timeout\": %v, want %v\n%s", approval, env, got, want, out)
			}
			if !strings.Contains(out, "--timeout "+formatMS(want)+" ") {
				t.Errorf("approval_timeout %s (env %v): gemini mcp add line lacks --timeout %s\n%s", approval, env, formatMS(want), out)
			}
		}
	}
}

func formatMS(ms float64) string {
	b, _ := json.Marshal(ms)
	return string(b)
}
