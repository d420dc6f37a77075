package importer

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-mcp/airlock/session/config"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/import")

// fixture is one source file under testdata/import with what importing it must give.
type fixture struct {
	path   string
	format Format
	// servers are the imported servers as the TOML has them (secrets as ${VAR}).
	servers []want
	// secrets are every secret value in the fixture: none may appear in the TOML.
	secrets []string
	// restored are values the in-memory config (Result.Config, airlock --from) must
	// hold again: server -> field -> value.
	restored map[string]map[string]string
}

type want struct {
	Name      string
	Transport config.Transport
	Command   string
	Args      []string
	URL       string
	Headers   map[string]string
	Env       map[string]string
}

var fixtures = []fixture{
	{
		path:   "claude-desktop/claude_desktop_config.json",
		format: ClaudeDesktop,
		servers: []want{
			{Name: "filesystem", Transport: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/alice/Desktop", "/Users/alice/Downloads"}},
			{Name: "github", Transport: "stdio", Command: "docker", Args: []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"},
				Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}"}},
			{Name: "brave-search", Transport: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-brave-search"},
				Env: map[string]string{"BRAVE_API_KEY": "${BRAVE_API_KEY}", "LOG_LEVEL": "info"}},
			{Name: "postgres", Transport: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-postgres", "postgresql://app:${POSTGRES_PASSWORD}@localhost:5432/app"}},
			{Name: "remote", Transport: "stdio", Command: "npx", Args: []string{"mcp-remote", "https://mcp.example.com/mcp", "--header", "Authorization: Bearer ${REMOTE_AUTHORIZATION}"}},
		},
		secrets: []string{"ghp_FAKEfake0123456789abcdefghijklmnopqr", "BSAfake9876543210zyxwvu", "hunter2-fake", "fake-remote-token-123456"},
		restored: map[string]map[string]string{
			"github":       {"env.GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_FAKEfake0123456789abcdefghijklmnopqr"},
			"brave-search": {"env.BRAVE_API_KEY": "BSAfake9876543210zyxwvu"},
			"postgres":     {"args[2]": "postgresql://app:hunter2-fake@localhost:5432/app"},
			"remote":       {"args[3]": "Authorization: Bearer fake-remote-token-123456"},
		},
	},
	{
		path:   "claude-code/.mcp.json",
		format: ClaudeCode,
		servers: []want{
			{Name: "sentry", Transport: "http", URL: "https://mcp.sentry.dev/mcp", Headers: map[string]string{"Authorization": "Bearer ${SENTRY_TOKEN}"}},
			{Name: "linear", Transport: "sse", URL: "https://mcp.linear.app/sse"},
			{Name: "internal-api", Transport: "http", URL: "https://api.example.com/mcp?tenant=acme&api_key=${INTERNAL_API_API_KEY}",
				Headers: map[string]string{"X-API-Key": "${API_KEY}", "X-Team": "${INTERNAL_API_X_TEAM}"}},
			{Name: "local-tool", Transport: "stdio", Command: "${HOME}/bin/tool-server", Args: []string{"--verbose"}, Env: map[string]string{"DATABASE_URL": "${DATABASE_URL}"}},
			{Name: "notion-workspace", Transport: "stdio", Command: "npx", Args: []string{"-y", "@notionhq/notion-mcp-server"}, Env: map[string]string{"OPENAPI_MCP_HEADERS": "${OPENAPI_MCP_HEADERS}"}},
		},
		secrets: []string{"sntrys_FAKEfake0123456789abcdef", "fake-query-key-42", "ntn_FAKE0123456789abcdefghij"},
		restored: map[string]map[string]string{
			"sentry":       {"headers.Authorization": "Bearer sntrys_FAKEfake0123456789abcdef"},
			"internal-api": {"url": "https://api.example.com/mcp?tenant=acme&api_key=fake-query-key-42", "headers.X-API-Key": "<API_KEY>"},
			"local-tool":   {"command": "<HOME>/bin/tool-server"},
		},
	},
	{
		path:   "cursor/.cursor/mcp.json",
		format: Cursor,
		servers: []want{
			{Name: "context7", Transport: "http", URL: "https://mcp.context7.com/mcp", Headers: map[string]string{"CONTEXT7_API_KEY": "${CONTEXT7_API_KEY}"}},
			{Name: "zapier", Transport: "sse", URL: "https://actions.zapier.com/mcp/${ZAPIER_URL_SECRET}/sse"},
			{Name: "puppeteer", Transport: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-puppeteer"},
				Env: map[string]string{"PUPPETEER_LAUNCH_OPTIONS": `{ "headless": true }`, "ALLOW_DANGEROUS": "true"}},
			{Name: "my-server-2", Transport: "stdio", Command: "python", Args: []string{"-m", "my_server", "--api-key", "${MY_SERVER_2_API_KEY}"}},
			{Name: "my-server", Transport: "stdio", Command: "my-server"},
		},
		secrets: []string{"ctx7sk-fake-0123456789abcdef", "sk-ak-FAKE0123456789abcdefABCDEF", "fake-key-not-real-123"},
		restored: map[string]map[string]string{
			"zapier":      {"url": "https://actions.zapier.com/mcp/sk-ak-FAKE0123456789abcdefABCDEF/sse"},
			"my-server-2": {"args[3]": "fake-key-not-real-123"},
		},
	},
	{
		path:   "vscode/.vscode/mcp.json",
		format: VSCode,
		servers: []want{
			{Name: "perplexity", Transport: "stdio", Command: "npx", Args: []string{"-y", "server-perplexity-ask"}, Env: map[string]string{"PERPLEXITY_API_KEY": "${PERPLEXITY_KEY}"}},
			{Name: "github", Transport: "http", URL: "https://api.githubcopilot.com/mcp/", Headers: map[string]string{"Authorization": "Bearer ${GITHUB_TOKEN}"}},
			{Name: "fetch", Transport: "stdio", Command: "uvx", Args: []string{"mcp-server-fetch"}},
			{Name: "workspace-files", Transport: "stdio", Command: "node", Args: []string{"/work/project/tools/files-server.js"},
				Env: map[string]string{"ROOT": "/work/project", "SEARCH_TOKEN": "${SEARCH_TOKEN}", "EDITOR_HOME": "${EDITOR_HOME}"}},
		},
		secrets: []string{"tok_fake_0123456789abcdef0123"},
		restored: map[string]map[string]string{
			"workspace-files": {"env.SEARCH_TOKEN": "tok_fake_0123456789abcdef0123"},
			"perplexity":      {"env.PERPLEXITY_API_KEY": "<PERPLEXITY_KEY>"},
		},
	},
	{
		path:   "codex/.codex/config.toml",
		format: Codex,
		servers: []want{
			{Name: "docs", Transport: "stdio", Command: "npx", Args: []string{"-y", "mcp-server-docs"}, Env: map[string]string{"DOCS_API_TOKEN": "${DOCS_API_TOKEN}", "NODE_ENV": "production"}},
			{Name: "figma", Transport: "http", URL: "https://mcp.figma.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${FIGMA_OAUTH_TOKEN}", "X-Figma-Region": "${FIGMA_X_FIGMA_REGION}"}},
			{Name: "shell-tools", Transport: "stdio", Command: "shell-mcp"},
			{Name: "analytics", Transport: "http", URL: "https://analytics.example.com/mcp", Headers: map[string]string{"X-Api-Key": "${ANALYTICS_KEY}", "X-Client-Secret": "${ANALYTICS_X_CLIENT_SECRET}"}},
		},
		secrets: []string{"docs_fake_token_0123456789abcdef", "cs_fake_0123456789"},
		restored: map[string]map[string]string{
			"docs":      {"env.DOCS_API_TOKEN": "docs_fake_token_0123456789abcdef"},
			"analytics": {"headers.X-Client-Secret": "cs_fake_0123456789"},
		},
	},
}

func (f fixture) convert(t *testing.T) *Result {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "import", f.path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Convert(data, Options{Name: path, WorkspaceFolder: "/work/project", Home: "/home/user"})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	return r
}

// markEnv answers every variable with <NAME>, so a parsed value shows which
// variable it came from.
func markEnv(name string) (string, bool) {
	if name == "XDG_STATE_HOME" {
		return "/state", true
	}
	return "<" + name + ">", true
}

// TestFixtures imports each format's fixture: the TOML is what the golden file says,
// config.Parse accepts it with the variables it names, it has the source's servers
// (names, commands and args or URLs, headers and env with secrets as ${VAR}), all
// untrusted, and no secret from the fixture appears in it.
func TestFixtures(t *testing.T) {
	for _, f := range fixtures {
		t.Run(string(f.format), func(t *testing.T) {
			r := f.convert(t)
			if r.Format != f.format {
				t.Errorf("format = %s, want %s", r.Format, f.format)
			}

			dir, _, _ := strings.Cut(f.path, "/")
			golden := filepath.Join("..", "..", "testdata", "import", dir, "golden.toml")
			if *update {
				if err := os.WriteFile(golden, r.TOML, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			wantTOML, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./session/importer -update)", err)
			}
			if diff := cmp.Diff(string(wantTOML), string(r.TOML)); diff != "" {
				t.Errorf("TOML differs from %s (-want +got); run with -update if the change is intended:\n%s", golden, diff)
			}

			for _, s := range f.secrets {
				if bytes.Contains(r.TOML, []byte(s)) {
					t.Errorf("secret %q appears in the TOML", s)
				}
				if strings.Contains(fmt.Sprintf("%v %+v %#v", r, r, r), s) {
					t.Errorf("secret %q appears when the Result is printed", s)
				}
			}

			// With every variable set, config.Parse accepts the TOML as written.
			cfg, err := config.Parse(r.TOML, "imported.toml", markEnv)
			if err != nil {
				t.Fatalf("config.Parse: %v\n%s", err, r.TOML)
			}
			oauth := map[string]bool{}
			for _, s := range r.Servers {
				oauth[s.Name] = s.OAuth
			}
			var got []want
			for _, s := range cfg.Servers {
				if s.Trust.String() != "untrusted" {
					t.Errorf("server %s: trust %s, want untrusted", s.Name, s.Trust)
				}
				// Streamable HTTP without an Authorization header gets OAuth on demand.
				_, auth := s.Headers["Authorization"]
				if wantOAuth := s.Transport == config.TransportHTTP && !auth; (s.OAuth != nil) != wantOAuth || oauth[s.Name] != wantOAuth {
					t.Errorf("server %s: oauth table %v, want %v", s.Name, s.OAuth != nil, wantOAuth)
				}
				got = append(got, want{Name: s.Name, Transport: s.Transport, Command: s.Command, Args: s.Args, URL: s.URL, Headers: s.Headers, Env: s.Env})
			}
			// What the TOML says before expansion: the Result's own view.
			var asWritten []want
			for _, s := range r.Servers {
				if s.Skipped != "" {
					t.Errorf("server %q not imported: %s", s.Source, s.Skipped)
					continue
				}
				asWritten = append(asWritten, want{Name: s.Name, Transport: s.Transport, Command: s.Command, Args: s.Args, URL: s.URL, Headers: s.Headers, Env: s.Env})
			}
			if diff := cmp.Diff(f.servers, asWritten, cmpWant); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			// config.Parse expands ${VAR} in args, url, env and headers, into <VAR> here.
			wantParsed := expandWant(f.servers)
			if diff := cmp.Diff(sortWant(wantParsed), sortWant(got), cmpWant); diff != "" {
				t.Errorf("parsed servers (-want +got):\n%s", diff)
			}

			// In memory (airlock --from), the secrets are back where they were.
			mem, err := r.Config(markEnv)
			if err != nil {
				t.Fatalf("Result.Config: %v", err)
			}
			if mem.Path != "" {
				t.Errorf("Config.Path = %q, want empty: nothing may be written next to the source", mem.Path)
			}
			for server, fields := range f.restored {
				for field, v := range fields {
					if got := fieldOf(t, mem, server, field); got != v {
						t.Errorf("in memory, servers.%s.%s = %q, want %q", server, field, got, v)
					}
				}
			}
		})
	}
}

var cmpWant = cmp.Transformer("nilEmpty", func(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
})

func expandWant(ws []want) []want {
	out := make([]want, len(ws))
	for i, w := range ws {
		w.Env = expandMap(w.Env)
		w.Headers = expandMap(w.Headers)
		w.URL, _ = expand(w.URL, markEnv)
		w.Args = slices.Clone(w.Args)
		for j, a := range w.Args {
			w.Args[j], _ = expand(a, markEnv)
		}
		if w.Args == nil && w.Command != "" {
			w.Args = []string{}
		}
		out[i] = w
	}
	return out
}

func expandMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := map[string]string{}
	for k, v := range m {
		out[k], _ = expand(v, markEnv)
	}
	return out
}

func sortWant(ws []want) []want {
	ws = slices.Clone(ws)
	for i := range ws {
		if len(ws[i].Args) == 0 {
			ws[i].Args = nil
		}
	}
	slices.SortFunc(ws, func(a, b want) int { return strings.Compare(a.Name, b.Name) })
	return ws
}

func fieldOf(t *testing.T, c *config.Config, server, field string) string {
	t.Helper()
	for _, s := range c.Servers {
		if s.Name != server {
			continue
		}
		switch {
		case field == "command":
			return s.Command
		case field == "url":
			return s.URL
		case strings.HasPrefix(field, "env."):
			return s.Env[strings.TrimPrefix(field, "env.")]
		case strings.HasPrefix(field, "headers."):
			return s.Headers[strings.TrimPrefix(field, "headers.")]
		case strings.HasPrefix(field, "args["):
			var i int
			fmt.Sscanf(field, "args[%d]", &i)
			if i < len(s.Args) {
				return s.Args[i]
			}
		}
		t.Fatalf("no field %s in server %s", field, server)
	}
	t.Fatalf("no server %s", server)
	return ""
}
