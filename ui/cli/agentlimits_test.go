package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session/importer"
)

// Cursor's and VS Code's snippets say what airlock knows of their tool timeout, in
// both forms of the snippet.
func TestSnippet_TimeoutLine(t *testing.T) {
	for _, client := range []string{"cursor", "vscode"} {
		for _, env := range []bool{false, true} {
			var b bytes.Buffer
			var err error
			if env {
				err = WriteSnippetEnv(&b, client, "http://127.0.0.1:7878/mcp", "/bin/airlock", "")
			} else {
				err = WriteSnippet(&b, client, "http://127.0.0.1:7878/mcp", "tok", "/bin/airlock")
			}
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, l := range strings.Split(b.String(), "\n") {
				if strings.HasPrefix(l, "# timeout: ") {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 || !strings.Contains(lines[0], "not known to airlock") || !strings.Contains(lines[0], "approval_timeout") {
				t.Errorf("%s (env %v): timeout lines %q in\n%s", client, env, lines, b.String())
			}
		}
	}
}

// The note of an agent with a known limit names it, its setting and its unit.
func TestWriteTimeoutNote(t *testing.T) {
	cases := map[string]string{
		"codex":  "# timeout: Codex CLI gives up on a tool call after 300 s unless the entry sets tool_timeout_sec (seconds); keep approval_timeout in airlock's [policy] below it\n",
		"gemini": "# timeout: Gemini CLI gives up on a tool call after 600000 ms (10m) unless the entry sets \"timeout\" (milliseconds); keep approval_timeout in airlock's [policy] below it\n",
		"claude": "# timeout: Claude Code gives up on a tool call after 100000000 ms (27h46m40s) unless the entry sets \"timeout\" (milliseconds); keep approval_timeout in airlock's [policy] below it\n",
		"nosuch": "",
	}
	for agent, want := range cases {
		var b bytes.Buffer
		WriteTimeoutNote(&b, agent)
		if b.String() != want {
			t.Errorf("%s: %q, want %q", agent, b.String(), want)
		}
	}
}

// Within a limit, and for an agent whose limit is unknown, nothing is said; the
// suggested setting leaves a minute beyond approval_timeout.
func TestAgentTimeoutWarnings(t *testing.T) {
	entries := []importer.AgentEntry{
		{Agent: "codex", File: "/h/.codex/config.toml", Name: "a", Key: "tool_timeout_sec", Timeout: 10 * time.Minute},
		{Agent: "gemini", File: "/h/.gemini/settings.json", Name: "b", Key: `"timeout"`},
		{Agent: "cursor", File: "/h/.cursor/mcp.json", Name: "c", Key: `"timeout"`},
	}
	if w := AgentTimeoutWarnings(10*time.Minute, entries, nil, "/h"); len(w) != 0 {
		t.Fatalf("at the limits: %q", w)
	}
	w := AgentTimeoutWarnings(20*time.Minute, entries, []string{"Codex CLI: cannot read /h/.codex/config.toml: boom"}, "/h")
	if len(w) != 3 || !strings.Contains(w[0], "~/.codex/config.toml: boom") ||
		!strings.HasSuffix(w[1], "set approval_timeout ≤ 10m or tool_timeout_sec = 1260") ||
		!strings.HasSuffix(w[2], `set approval_timeout ≤ 10m or "timeout" = 1260000`) {
		t.Fatalf("warnings %q", w)
	}
}
