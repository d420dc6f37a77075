package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// SnippetClients are the agent clients `airlock gateway snippet` knows.
var SnippetClients = []string{"claude", "codex", "cursor", "vscode"}

// WriteSnippet writes a ready config block that points an agent client at the gateway
// url with its bearer token, and says where the block goes. self is the airlock
// executable and bridgeArgs its arguments (what the bridge needs to find the same
// gateway: --demo, --config, --gateway), for the stdio bridge alternative.
func WriteSnippet(w io.Writer, client, url, token, self string, bridgeArgs ...string) error {
	auth := map[string]string{"Authorization": "Bearer " + token}
	var where string
	var block any
	switch client {
	case "claude":
		where = "Claude Code: put this in .mcp.json in your project (or run: claude mcp add --transport http airlock " + url + ` --header "Authorization: Bearer ` + token + `")`
		block = map[string]any{"mcpServers": map[string]any{"airlock": map[string]any{"type": "http", "url": url, "headers": auth}}}
	case "cursor":
		where = "Cursor: put this in ~/.cursor/mcp.json (or .cursor/mcp.json in your project)"
		block = map[string]any{"mcpServers": map[string]any{"airlock": map[string]any{"url": url, "headers": auth}}}
	case "vscode":
		where = "VS Code: put this in .vscode/mcp.json in your workspace"
		block = map[string]any{"servers": map[string]any{"airlock": map[string]any{"type": "http", "url": url, "headers": auth}}}
	case "codex":
		// TOML, and the token stays out of it in both forms (WriteCodexSnippet).
		return WriteCodexSnippet(w, url, codexTokenFlags(bridgeArgs), defaultApproval, self, bridgeArgs...)
	default:
		return fmt.Errorf("unknown client %q (want one of %v)", client, SnippetClients)
	}
	b, err := json.MarshalIndent(block, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# %s\n%s\n", where, b)
	stdio, _ := json.MarshalIndent(map[string]any{"command": self, "args": append([]string{"bridge"}, bridgeArgs...)}, "", "  ")
	fmt.Fprintf(w, "# A client that only launches stdio servers can use the bridge instead:\n# %s\n", compact(stdio))
	fmt.Fprintln(w, "# The token is a secret: anyone with it can ask airlock to run tools (a person still approves risky calls).")
	return nil
}

func compact(b []byte) string {
	var v any
	_ = json.Unmarshal(b, &v)
	out, _ := json.Marshal(v)
	return string(out)
}

// WriteSnippetEnv writes the config block for client with the token left out: the
// header reads it from the environment (${AIRLOCK_TOKEN} for Claude Code,
// ${env:AIRLOCK_TOKEN} for Cursor) or, in VS Code, from a password prompt. Nothing it
// writes is secret, so it can be shown on a projector; the export line comes
// separately from `airlock gateway token --export` (cfgFlags are the flags that
// command needs to find the same token).
func WriteSnippetEnv(w io.Writer, client, url, self, cfgFlags string, bridgeArgs ...string) error {
	var where string
	var block any
	switch client {
	case "claude":
		where = "Claude Code: put this in .mcp.json in your project; Claude Code expands ${AIRLOCK_TOKEN} in headers (or run: claude mcp add --transport http airlock " + url + ` --header 'Authorization: Bearer ${AIRLOCK_TOKEN}')`
		block = map[string]any{"mcpServers": map[string]any{"airlock": map[string]any{"type": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer ${AIRLOCK_TOKEN}"}}}}
	case "cursor":
		where = "Cursor: put this in ~/.cursor/mcp.json (or .cursor/mcp.json in your project); Cursor expands ${env:AIRLOCK_TOKEN}"
		block = map[string]any{"mcpServers": map[string]any{"airlock": map[string]any{"url": url, "headers": map[string]string{"Authorization": "Bearer ${env:AIRLOCK_TOKEN}"}}}}
	case "vscode":
		where = "VS Code: put this in .vscode/mcp.json in your workspace; VS Code asks for the token once (paste the value of AIRLOCK_TOKEN) and stores it"
		block = map[string]any{
			"inputs":  []any{map[string]any{"type": "promptString", "id": "airlock-token", "description": "airlock gateway token", "password": true}},
			"servers": map[string]any{"airlock": map[string]any{"type": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer ${input:airlock-token}"}}},
		}
	case "codex":
		return WriteCodexSnippet(w, url, cfgFlags, defaultApproval, self, bridgeArgs...)
	default:
		return fmt.Errorf("unknown client %q (want one of %v)", client, SnippetClients)
	}
	b, err := json.MarshalIndent(block, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# %s\n%s\n", where, b)
	fmt.Fprintf(w, "# Then, in the shell that starts the agent (the token is set, never shown):\n#   eval \"$(airlock gateway token --export%s)\"\n", cfgFlags)
	stdio, _ := json.MarshalIndent(map[string]any{"command": self, "args": append([]string{"bridge"}, bridgeArgs...)}, "", "  ")
	fmt.Fprintf(w, "# A client that only launches stdio servers can use the bridge instead (it reads the token itself):\n# %s\n", compact(stdio))
	return nil
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
