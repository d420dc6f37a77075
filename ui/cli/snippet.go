package cli

import (
	"encoding/json"
	"fmt"
	"io"
)

// SnippetClients are the agent clients `airlock gateway snippet` knows.
var SnippetClients = []string{"claude", "cursor", "vscode"}

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
