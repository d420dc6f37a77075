package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/airlock-mcp/airlock/session/config"
)

// codexToolTimeout is Codex CLI's own limit on one tool call (tool_timeout_sec),
// in seconds, when its config does not set one: after it Codex gives up on the
// call, and airlock withdraws the question it was waiting on.
const codexToolTimeout = 300

// CodexToolTimeoutSec is the tool_timeout_sec the Codex snippet sets: Codex's own
// default, or approval (airlock's approval_timeout) and a minute more when that is
// longer, so that Codex waits while airlock's question does and hears the denial.
func CodexToolTimeoutSec(approval time.Duration) int {
	s := int((approval+time.Second-1)/time.Second) + 60
	return max(s, codexToolTimeout)
}

// WriteCodexSnippet writes the [mcp_servers.airlock] table for Codex CLI's
// config.toml. The token never goes in the table (a TOML file that others may read
// or commit): Codex reads it from AIRLOCK_TOKEN (bearer_token_env_var), which
// `airlock gateway token --export` sets (cfgFlags are the flags that command needs to
// find the same token). approval is airlock's approval_timeout, which sets
// tool_timeout_sec (CodexToolTimeoutSec). The table lets Codex pass every airlock
// tool through (default_tools_approval_mode = "approve"): airlock asks the person,
// and Codex without it refuses a destructive tool itself in `codex exec` ("MCP tool
// call requires approval, but approval policy is never"), whatever approval_policy
// says. required = true makes Codex wait for the gateway's tool list before the
// first turn and refuse to start without it: by default Codex does not wait.
func WriteCodexSnippet(w io.Writer, url, cfgFlags string, approval time.Duration, self string, bridgeArgs ...string) error {
	timeout := CodexToolTimeoutSec(approval)
	var tbl bytes.Buffer
	enc := toml.NewEncoder(&tbl)
	enc.Indent = ""
	if err := enc.Encode(map[string]any{
		"url":                         url,
		"bearer_token_env_var":        "AIRLOCK_TOKEN",
		"default_tools_approval_mode": "approve",
		"tool_timeout_sec":            timeout,
		"required":                    true,
	}); err != nil {
		return err
	}
	fmt.Fprintln(w, "# Codex CLI: put this in ~/.codex/config.toml ($CODEX_HOME/config.toml); all of it is TOML, so it can be appended as it is.")
	fmt.Fprintln(w, "# Codex sends the token from AIRLOCK_TOKEN; the file never holds it.")
	fmt.Fprintln(w, `# default_tools_approval_mode = "approve": Codex lets every airlock tool through and airlock asks you;`)
	fmt.Fprintln(w, `# without it codex exec refuses destructive tools itself ("MCP tool call requires approval, but approval policy is never").`)
	fmt.Fprintf(w, "# tool_timeout_sec: Codex gives up on a tool call after this many seconds (%d unless set) and airlock then\n", codexToolTimeout)
	fmt.Fprintf(w, "# withdraws its question; airlock denies an unanswered question after approval_timeout (%s here).\n", formatApproval(approval))
	fmt.Fprintln(w, "# required = true: Codex waits for airlock when it starts and will not start without it (else a session")
	fmt.Fprintln(w, "# that starts before the gateway answers goes on without airlock's tools).")
	fmt.Fprintf(w, "[mcp_servers.airlock]\n%s", tbl.String())
	fmt.Fprintf(w, "# Then, in the shell that starts Codex (the token is set, never shown):\n#   eval \"$(airlock gateway token --export%s)\"\n", cfgFlags)
	fmt.Fprintln(w, "# Or run airlock's stdio bridge, which reads the token itself: replace url and bearer_token_env_var with")
	fmt.Fprintf(w, "#   command = %s\n#   args = %s\n", tomlInline(self), tomlInline(append([]string{"bridge"}, bridgeArgs...)))
	return nil
}

// tomlInline is v as a TOML value on one line.
func tomlInline(v any) string {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(map[string]any{"v": v}); err != nil {
		return ""
	}
	return strings.TrimSpace(strings.TrimPrefix(b.String(), "v = "))
}

// formatApproval writes an approval timeout as the config would: "2m", "90s".
func formatApproval(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%dm", int(d/time.Minute))
	}
	return d.Round(time.Second).String()
}

// codexTokenFlags reads, from the bridge's arguments, the flags `airlock gateway
// token` needs to find the same token (--demo, --config FILE; not --gateway).
func codexTokenFlags(bridgeArgs []string) string {
	var b strings.Builder
	for i := 0; i < len(bridgeArgs); i++ {
		switch bridgeArgs[i] {
		case "--demo":
			b.WriteString(" --demo")
		case "--config":
			if i+1 < len(bridgeArgs) {
				b.WriteString(" --config " + ShellQuote(bridgeArgs[i+1]))
				i++
			}
		case "--gateway":
			i++
		}
	}
	return b.String()
}

// defaultApproval is the approval_timeout of a config that does not set one.
const defaultApproval = config.DefaultApprovalTimeout
