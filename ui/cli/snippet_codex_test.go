package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// The Codex block is TOML that Codex reads as one MCP server: the gateway's URL,
// the token named by its variable (never the token itself, in both forms), the
// approval mode that leaves asking to airlock, and a tool timeout that outlasts
// airlock's approval_timeout; Codex must have airlock to start. The eval line finds
// the same token.
func TestCodexSnippet(t *testing.T) {
	const url, token = "http://127.0.0.1:7979/mcp", "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name     string
		write    func(*bytes.Buffer) error
		timeout  int64
		evalLine string
	}{
		{"plain", func(b *bytes.Buffer) error {
			return WriteSnippet(b, "codex", url, token, "/usr/bin/airlock", "--config", "/home/me/my airlock.toml", "--gateway", "127.0.0.1:7979")
		}, 300, `eval "$(airlock gateway token --export --config '/home/me/my airlock.toml')"`},
		{"env", func(b *bytes.Buffer) error {
			return WriteSnippetEnv(b, "codex", url, "/usr/bin/airlock", " --demo", "--demo")
		}, 300, `eval "$(airlock gateway token --export --demo)"`},
		{"long approval_timeout", func(b *bytes.Buffer) error {
			return WriteCodexSnippet(b, url, "", 10*time.Minute, "/usr/bin/airlock")
		}, 660, `eval "$(airlock gateway token --export)"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			var cfg struct {
				MCPServers map[string]map[string]any `toml:"mcp_servers"`
			}
			md, err := toml.Decode(out, &cfg)
			if err != nil {
				t.Fatalf("not TOML: %v\n%s", err, out)
			}
			if len(md.Undecoded()) != 0 || len(cfg.MCPServers) != 1 {
				t.Fatalf("want one table mcp_servers.airlock:\n%s", out)
			}
			got := cfg.MCPServers["airlock"]
			want := map[string]any{"url": url, "bearer_token_env_var": "AIRLOCK_TOKEN", "default_tools_approval_mode": "approve", "tool_timeout_sec": tc.timeout, "required": true}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
			if len(got) != len(want) {
				t.Errorf("the table holds %v", got)
			}
			if strings.Contains(out, token) {
				t.Errorf("the block shows the token:\n%s", out)
			}
			for _, s := range []string{tc.evalLine, "tool_timeout_sec", "approval policy is never", `args = ["bridge"`} {
				if !strings.Contains(out, s) {
					t.Errorf("the block lacks %q:\n%s", s, out)
				}
			}
		})
	}
}

func TestCodexToolTimeoutSec(t *testing.T) {
	for _, tc := range []struct {
		approval time.Duration
		want     int
	}{
		{2 * time.Minute, 300},
		{4 * time.Minute, 300},
		{4*time.Minute + 1, 301},
		{10 * time.Minute, 660},
	} {
		if got := CodexToolTimeoutSec(tc.approval); got != tc.want {
			t.Errorf("CodexToolTimeoutSec(%v) = %d, want %d", tc.approval, got, tc.want)
		}
	}
}
