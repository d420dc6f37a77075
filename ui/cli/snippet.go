package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// SnippetClients are the agent clients `airlock gateway snippet` knows.
var SnippetClients = []string{"claude", "codex", "gemini", "cursor", "vscode"}

// WriteSnippet writes a ready config block that points an agent client at the gateway
// url with its bearer token, and says where the block goes. self is the airlock
// executable and bridgeArgs its arguments (what the bridge needs to find the same
// gateway: --demo, --config, --gateway), for the stdio bridge alternative.
func WriteSnippet(w io.Writer, client, url, token, self string, bridgeArgs ...string) error {
	auth := map[string]string{"Authorization": "Bearer " + token}
	var where, after string
	var block any
	switch client {
	case "claude":
		where = "Claude Code: run this in your project (the token stays in your own ~/.claude.json; add --scope user for every project):\n" +
			"#   claude mcp add --transport http airlock " + url + ` --header "Authorization: Bearer ` + token + `"` + "\n" +
			"# or put this in the project's .mcp.json (a file others may see: `airlock gateway snippet claude --env` keeps the token out of it); claude asks once to approve it:"
		block = map[string]any{"mcpServers": map[string]any{"airlock": map[string]any{"type": "http", "url": url, "headers": auth}}}
		after = claudeNotes
	case "cursor":
		where = "Cursor: put this in ~/.cursor/mcp.json (or .cursor/mcp.json in your project)"
		defer WriteTimeoutNote(w, "cursor")
		block = map[string]any{"mcpServers": map[string]any{"airlock": map[string]any{"url": url, "headers": auth}}}
	case "vscode":
		where = "VS Code: put this in .vscode/mcp.json in your workspace"
		defer WriteTimeoutNote(w, "vscode")
		block = map[string]any{"servers": map[string]any{"airlock": map[string]any{"type": "http", "url": url, "headers": auth}}}
	case "codex":
		// TOML, and the token stays out of it in both forms (WriteCodexSnippet).
		return WriteCodexSnippet(w, url, codexTokenFlags(bridgeArgs), defaultApproval, self, bridgeArgs...)
	case "gemini":
		return WriteGeminiSnippet(w, url, token, self, defaultApproval, bridgeArgs...)
	default:
		return fmt.Errorf("unknown client %q (want one of %v)", client, SnippetClients)
	}
	return writeTokenSnippet(w, where, block, after, self, bridgeArgs)
}

// writeTokenSnippet writes a JSON snippet that carries the token: where, the
// block, after, and the bridge alternative.
func writeTokenSnippet(w io.Writer, where string, block any, after, self string, bridgeArgs []string) error {
	b, err := json.MarshalIndent(block, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# %s\n%s\n%s", where, b, after)
	stdio, _ := json.MarshalIndent(map[string]any{"command": self, "args": append([]string{"bridge"}, bridgeArgs...)}, "", "  ")
	fmt.Fprintf(w, "# A client that only launches stdio servers can use the bridge instead:\n# %s\n", compact(stdio))
	fmt.Fprintln(w, "# The token is a secret: anyone with it can ask airlock to run tools (a person still approves risky calls).")
	return nil
}

// claudeNotes follow Claude Code's block: its own permission prompt, which would ask
// before airlock does, and its own limits on a tool call (Claude Code 2.1.328: a
// call may take MCP_TOOL_TIMEOUT ms, 100000000 by default; one with neither an
// answer nor progress for CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT ms, 300000 by default for
// an HTTP server and checked every 30 s, is given up, but the gateway's progress
// every 5 s while a question waits resets that idle timer; a server's "timeout"
// raises both for that server).
const claudeNotes = "# Claude Code asks its own permission before each MCP tool; to leave the asking to airlock, allow airlock's tools there:\n" +
	"#   claude --allowedTools mcp__airlock   (or \"permissions\": {\"allow\": [\"mcp__airlock\"]} in ~/.claude/settings.json; a project's .claude/settings.json counts once you trust its folder in claude)\n" +
	"# Claude Code's own limit on a tool call: MCP_TOOL_TIMEOUT (ms, default 100000000, about 28 hours; \"timeout\" in the block sets it for airlock alone). Its idle limit (CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT, 5 minutes) never ends a call that waits for you: airlock tells Claude Code every 5 s that it still waits.\n" +
	"# airlock denies an unanswered question after approval_timeout (2m by default); raise it in airlock's config to let a question wait longer.\n"

func compact(b []byte) string {
	var v any
	_ = json.Unmarshal(b, &v)
	out, _ := json.Marshal(v)
	return string(out)
}

// WriteSnippetEnv writes the config block for client with the token left out: the
// header reads it from the environment (${AIRLOCK_TOKEN} for Claude Code and Gemini
// CLI, ${env:AIRLOCK_TOKEN} for Cursor) or, in VS Code, from a password prompt. Nothing it
// writes is secret, so it can be shown on a projector; the export line comes
// separately from `airlock gateway token --export` (cfgFlags are the flags that
// command needs to find the same token).
func WriteSnippetEnv(w io.Writer, client, url, self, cfgFlags string, bridgeArgs ...string) error {
	var where, after string
	var block any
	switch client {
	case "claude":
		where = "Claude Code: put this in .mcp.json in your project; Claude Code expands ${AIRLOCK_TOKEN} in headers, and claude asks once to approve the server (or run: claude mcp add --transport http airlock " + url + ` --header 'Authorization: Bearer ${AIRLOCK_TOKEN}')`
		block = map[string]any{"mcpServers": map[string]any{"airlock": map[string]any{"type": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer ${AIRLOCK_TOKEN}"}}}}
		after = claudeNotes
	case "cursor":
		where = "Cursor: put this in ~/.cursor/mcp.json (or .cursor/mcp.json in your project); Cursor expands ${env:AIRLOCK_TOKEN}"
		defer WriteTimeoutNote(w, "cursor")
		block = map[string]any{"mcpServers": map[string]any{"airlock": map[string]any{"url": url, "headers": map[string]string{"Authorization": "Bearer ${env:AIRLOCK_TOKEN}"}}}}
	case "vscode":
		where = "VS Code: put this in .vscode/mcp.json in your workspace; VS Code asks for the token once (paste the value of AIRLOCK_TOKEN) and stores it"
		defer WriteTimeoutNote(w, "vscode")
		block = map[string]any{
			"inputs":  []any{map[string]any{"type": "promptString", "id": "airlock-token", "description": "airlock gateway token", "password": true}},
			"servers": map[string]any{"airlock": map[string]any{"type": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer ${input:airlock-token}"}}},
		}
	case "codex":
		return WriteCodexSnippet(w, url, cfgFlags, defaultApproval, self, bridgeArgs...)
	case "gemini":
		return WriteGeminiSnippetEnv(w, url, self, cfgFlags, defaultApproval, bridgeArgs...)
	default:
		return fmt.Errorf("unknown client %q (want one of %v)", client, SnippetClients)
	}
	return writeEnvSnippet(w, where, block, after, self, cfgFlags, bridgeArgs)
}

// writeEnvSnippet writes a JSON snippet that reads the token from the environment:
// where, the block, after, the export line and the bridge alternative.
func writeEnvSnippet(w io.Writer, where string, block any, after, self, cfgFlags string, bridgeArgs []string) error {
	b, err := json.MarshalIndent(block, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# %s\n%s\n%s", where, b, after)
	fmt.Fprintf(w, "# Then, in the shell that starts the agent (the token is set, never shown):\n#   eval \"$(airlock gateway token --export%s)\"\n", cfgFlags)
	stdio, _ := json.MarshalIndent(map[string]any{"command": self, "args": append([]string{"bridge"}, bridgeArgs...)}, "", "  ")
	fmt.Fprintf(w, "# A client that only launches stdio servers can use the bridge instead (it reads the token itself):\n# %s\n", compact(stdio))
	return nil
}

// geminiTimeoutMS is how long Gemini CLI waits for one MCP call before it gives
// up when its entry sets no "timeout": 10 minutes.
const geminiTimeoutMS = 600000

// GeminiTimeoutMS is the "timeout" the Gemini snippet sets: Gemini's own default,
// or approval (airlock's approval_timeout) and a minute more when that is longer,
// so that Gemini waits while airlock's question does and hears the denial (the
// rule of CodexToolTimeoutSec).
func GeminiTimeoutMS(approval time.Duration) int64 {
	ms := int64((approval+time.Millisecond-1)/time.Millisecond) + 60000
	return max(ms, geminiTimeoutMS)
}

// WriteGeminiSnippet writes Gemini CLI's settings block with the token in its
// header; approval is airlock's approval_timeout, which sets "timeout"
// (GeminiTimeoutMS).
func WriteGeminiSnippet(w io.Writer, url, token, self string, approval time.Duration, bridgeArgs ...string) error {
	where, block, after := geminiSnippet(url, "Bearer "+token, `"Authorization: Bearer `+token+`"`, approval)
	return writeTokenSnippet(w, where, block, after, self, bridgeArgs)
}

// WriteGeminiSnippetEnv is WriteGeminiSnippet with the token read from
// AIRLOCK_TOKEN (cfgFlags as for WriteSnippetEnv).
func WriteGeminiSnippetEnv(w io.Writer, url, self, cfgFlags string, approval time.Duration, bridgeArgs ...string) error {
	where, block, after := geminiSnippet(url, "Bearer ${AIRLOCK_TOKEN}", `'Authorization: Bearer ${AIRLOCK_TOKEN}'`, approval)
	where += "\n# Gemini expands ${AIRLOCK_TOKEN} (any $VAR or ${VAR}) in its settings from the environment it starts in"
	return writeEnvSnippet(w, where, block, after, self, cfgFlags, bridgeArgs)
}

// geminiSnippet is Gemini CLI's where line, block and lines after the block, for an
// Authorization header value and that header quoted for `gemini mcp add`.
//
// "trust": true is Gemini's per-server switch that skips its own confirmation of
// the server's tools: without it Gemini asks before every airlock tool (and airlock
// asks again), and `gemini -p` offers the model none of them, since it cannot ask.
// Gemini connects to no MCP server at all in a folder it does not trust.
func geminiSnippet(url, header, quotedHeader string, approval time.Duration) (string, any, string) {
	timeout := GeminiTimeoutMS(approval)
	where := "Gemini CLI: put this in ~/.gemini/settings.json (or run: gemini mcp add --scope user --transport http --trust --timeout " +
		fmt.Sprint(timeout) + " -H " + quotedHeader + " airlock " + url + ")\n" +
		"# Gemini connects to MCP servers only in a folder it trusts: answer its trust dialog once (it keeps the answer in\n" +
		"#   ~/.gemini/trustedFolders.json), or run gemini --skip-trust (GEMINI_CLI_TRUST_WORKSPACE=true) where nobody can answer\n" +
		`# "trust": true leaves the asking to airlock: without it Gemini asks before each airlock tool too, and gemini -p offers none`
	block := map[string]any{"mcpServers": map[string]any{"airlock": map[string]any{
		"httpUrl": url,
		"headers": map[string]string{"Authorization": header},
		"trust":   true,
		"timeout": timeout,
	}}}
	after := fmt.Sprintf(`# "timeout": Gemini gives up on a call after this many ms (%d, 10 minutes, unless set) and airlock then`+"\n"+
		"#   withdraws its question; airlock denies an unanswered question after approval_timeout (%s here).\n", geminiTimeoutMS, formatApproval(approval))
	return where, block, after
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
