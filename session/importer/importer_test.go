package importer

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-mcp/airlock/session/config"
)

func TestNormaliseName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"github", "github"},
		{"GitHub", "github"},
		{"brave search", "brave-search"},
		{"my.server", "my-server"},
		{"local_tool", "local-tool"},
		{"a__b", "a-b"},
		{"--lead", "lead"},
		{"trail--", "trail"},
		{"café olé", "caf-ol"},
		{"", "server"},
		{"!!!", "server"},
		{"日本", "server"},
		{strings.Repeat("x", 40), strings.Repeat("x", 32)},
		{strings.Repeat("ab-", 11) + "c", "ab-ab-ab-ab-ab-ab-ab-ab-ab-ab-ab"},
		{"0day", "0day"},
	}
	for _, tt := range tests {
		got := normaliseName(tt.in)
		if got != tt.want {
			t.Errorf("normaliseName(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !nameRE().MatchString(got) {
			t.Errorf("normaliseName(%q) = %q, not a valid name", tt.in, got)
		}
	}
}

func convertJSON(t *testing.T, name, src string) *Result {
	t.Helper()
	r, err := Convert([]byte(src), Options{Name: name})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	return r
}

// parses checks that config.Parse accepts the TOML with every variable set.
func parses(t *testing.T, r *Result) *config.Config {
	t.Helper()
	c, err := config.Parse(r.TOML, "imported.toml", markEnv)
	if err != nil {
		t.Fatalf("config.Parse: %v\n%s", err, r.TOML)
	}
	return c
}

func TestNamesRenamedAndCollisions(t *testing.T) {
	r := convertJSON(t, "mcp.json", `{"mcpServers": {
		"My Server": {"command": "a"},
		"my-server": {"command": "b"},
		"MY_SERVER": {"command": "c"},
		"`+strings.Repeat("long", 10)+`": {"command": "d"},
		"`+strings.Repeat("long", 8)+`": {"command": "e"}
	}}`)
	var got []string
	for _, s := range r.Servers {
		got = append(got, s.Source+"="+s.Name)
	}
	want := []string{
		"My Server=my-server-2", // my-server was already valid, so it keeps its name
		"my-server=my-server",
		"MY_SERVER=my-server-3",
		strings.Repeat("long", 10) + "=" + strings.Repeat("long", 7) + "lo-2",
		strings.Repeat("long", 8) + "=" + strings.Repeat("long", 8),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(r.TOML), `# renamed from "My Server": server names match`) {
		t.Errorf("no rename note:\n%s", r.TOML)
	}
	if strings.Contains(string(r.TOML), `renamed from "my-server"`) {
		t.Errorf("a valid name was noted as renamed:\n%s", r.TOML)
	}
	parses(t, r)
}

func TestSecretDetection(t *testing.T) {
	tests := []struct {
		key, value string
		want       bool
	}{
		{"GITHUB_TOKEN", "anything", true},
		{"apiKey", "x", true},
		{"X-API-Key", "abc", true},
		{"Authorization", "whatever", true},
		{"DB_PASSWORD", "hunter2", true},
		{"CLIENT_SECRET", "s", true},
		{"ACCESSTOKEN", "s", true},
		{"Cookie", "a=b", true},
		{"X-Custom", "Bearer abcdef", true},
		{"NOTE", "ghp_0123456789abcdefghij", true},
		{"NOTE", "sk-proj-abcdefghij0123", true},
		{"NOTE", "AKIAIOSFODNN7EXAMPLE", true},
		{"NOTE", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", true},
		{"DATABASE_URL", "postgres://u:pw@host/db", true},
		{"OPTIONS", `{"Authorization": "Bearer abcdefgh1234"}`, true},
		{"ID", "3f9a1c0b7d2e4f6a8b1c3d5e7f9a0b2c", true},
		// Not secrets.
		{"LOG_LEVEL", "debug", false},
		{"NODE_ENV", "production", false},
		{"PATH", "/usr/local/bin:/usr/bin", false},
		{"KEYBOARD_LAYOUT", "us", false},
		{"GIT_AUTHOR_NAME", "Alice", false},
		{"HOME", "/home/alice/some/very/long/path/with/digits123", false},
		{"NOTES_DIR", "./notes-archive-2024-and-2025-x", false},
		{"URL", "https://example.com/mcp", false},
		{"PACKAGE", "@modelcontextprotocol/server-filesystem", false},
		{"VERSION", "2025-11-25", false},
		{"TOKEN", "", false},
	}
	for _, tt := range tests {
		if got := isSecret(tt.key, tt.value); got != tt.want {
			t.Errorf("isSecret(%q, %q) = %v, want %v", tt.key, tt.value, got, tt.want)
		}
	}
}

// A hostile source cannot put terminal escapes or fake lines into the output, and the
// output still parses.
func TestHostileStrings(t *testing.T) {
	r := convertJSON(t, "mcp.json", `{"mcpServers": {
		"evil\u001b[31m\nname": {"command": "run\u001b]0;x\u0007", "args": ["a\nb", "\u202e"], "env": {"K\nEY": "v\u001b"}, "weird\nkey": 1}
	}}`)
	out := string(r.TOML)
	for _, c := range out {
		if c < 0x20 && c != '\n' || c == 0x7f || c == 0x202e {
			t.Fatalf("output holds raw %U:\n%s", c, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "name") && !strings.HasPrefix(line, "#") && strings.HasPrefix(line, "name") {
			t.Errorf("source text started its own line: %q", line)
		}
	}
	c := parses(t, r)
	if got := c.Servers[0].Args; !cmp.Equal(got, []string{"a\nb", "\u202e"}) {
		t.Errorf("args = %q, want them kept exactly", got)
	}
}

func TestSkipped(t *testing.T) {
	tests := []struct {
		name, file, src, reason string
	}{
		{"not an object", "mcp.json", `{"mcpServers": {"x": "npx"}}`, "want an object"},
		{"command not a string", "mcp.json", `{"mcpServers": {"x": {"command": 1}}}`, "command: want a string, got a number"},
		{"args not an array", "mcp.json", `{"mcpServers": {"x": {"command": "a", "args": "b"}}}`, "args: want an array of strings"},
		{"env value an object", "mcp.json", `{"mcpServers": {"x": {"command": "a", "env": {"K": {}}}}}`, "env.K: want a string"},
		{"neither", "mcp.json", `{"mcpServers": {"x": {"args": ["a"]}}}`, "neither command nor url"},
		{"both without type", "mcp.json", `{"mcpServers": {"x": {"command": "a", "url": "http://h/mcp"}}}`, "both command and url"},
		{"unknown type", ".mcp.json", `{"mcpServers": {"x": {"type": "websocket", "url": "ws://h"}}}`, `type "websocket" is not a transport`},
		{"stdio without command", ".mcp.json", `{"mcpServers": {"x": {"type": "stdio", "url": "http://h"}}}`, "needs a command"},
		{"http without url", ".mcp.json", `{"mcpServers": {"x": {"type": "http", "command": "a"}}}`, "needs a url"},
		{"host is a variable", ".mcp.json", `{"mcpServers": {"x": {"type": "http", "url": "https://${HOST}/mcp"}}}`, "host is a variable"},
		{"not http", "mcp.json", `{"mcpServers": {"x": {"url": "ftp://h/mcp"}}}`, `want http or https, got scheme "ftp"`},
		{"no host", "mcp.json", `{"mcpServers": {"x": {"url": "http:///mcp"}}}`, "no host"},
		{"airlock bridge", "mcp.json", `{"mcpServers": {"x": {"command": "/usr/local/bin/airlock", "args": ["bridge"]}}}`, "airlock's own bridge"},
		{"airlock gateway", ".mcp.json", `{"mcpServers": {"airlock": {"type": "http", "url": "http://127.0.0.1:7878/mcp", "headers": {"Authorization": "Bearer abc"}}}}`, "airlock's own agent gateway"},
		{"codex timeout a string", "config.toml", "[mcp_servers.x]\ncommand = \"a\"\nstartup_timeout_sec = \"20\"\n", "startup_timeout_sec: want a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := convertJSON(t, tt.file, tt.src)
			if len(r.Servers) != 1 {
				t.Fatalf("servers = %d, want 1", len(r.Servers))
			}
			s := r.Servers[0]
			if !strings.Contains(s.Skipped, tt.reason) || s.Name != "" {
				t.Errorf("Skipped = %q (name %q), want it to say %q", s.Skipped, s.Name, tt.reason)
			}
			if !strings.Contains(string(r.TOML), "# Not imported: \""+s.Source+"\": ") {
				t.Errorf("TOML does not say the server was not imported:\n%s", r.TOML)
			}
			if strings.Contains(string(r.TOML), "abc") {
				t.Errorf("a skipped server's header value appears:\n%s", r.TOML)
			}
			if c := parses(t, r); len(c.Servers) != 0 {
				t.Errorf("parsed %d servers, want 0", len(c.Servers))
			}
		})
	}
}

func TestNotes(t *testing.T) {
	tests := []struct {
		name, file, src, note string
	}{
		{"unknown key", "mcp.json", `{"mcpServers": {"x": {"command": "a", "timeout": 5}}}`, `"timeout" was not imported`},
		{"auto approve", "mcp.json", `{"mcpServers": {"x": {"command": "a", "autoApprove": ["t"]}}}`, "airlock decides every call itself"},
		{"disabled", "mcp.json", `{"mcpServers": {"x": {"command": "a", "disabled": true}}}`, "disabled in the source"},
		{"codex disabled", "config.toml", "[mcp_servers.x]\ncommand = \"a\"\nenabled = false\n", "disabled in the source"},
		{"codex enabled_tools", "config.toml", "[mcp_servers.x]\ncommand = \"a\"\nenabled_tools = [\"t\"]\n", "enabled_tools was not imported"},
		{"headers on stdio", ".mcp.json", `{"mcpServers": {"x": {"type": "stdio", "command": "a", "headers": {"A": "b"}}}}`, "headers were not imported"},
		{"command on http", ".mcp.json", `{"mcpServers": {"x": {"type": "http", "url": "http://h/mcp", "command": "a"}}}`, "command, args, env and cwd were not imported"},
		{"default dropped", ".mcp.json", `{"mcpServers": {"x": {"command": "a", "env": {"A": "${A:-x}"}}}}`, "default for A is not kept"},
		{"duplicate", "mcp.json", `{"mcpServers": {"x": {"command": "a"}, "x": {"command": "b"}}}`, "defined more than once"},
		{"claude.json projects", ".claude.json", `{"mcpServers": {}, "projects": {"/p": {"mcpServers": {"y": {"command": "b"}}}}}`, "servers configured per project"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := convertJSON(t, tt.file, tt.src)
			if !strings.Contains(string(r.TOML), tt.note) {
				t.Errorf("TOML lacks %q:\n%s", tt.note, r.TOML)
			}
			parses(t, r)
		})
	}
	// The last definition of a duplicated server is the one imported, as in JSON.parse.
	r := convertJSON(t, "mcp.json", `{"mcpServers": {"x": {"command": "a"}, "x": {"command": "b"}}}`)
	if len(r.Servers) != 1 || r.Servers[0].Command != "b" {
		t.Errorf("duplicate: servers = %+v, want one with command b", r.Servers)
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name, src string
		want      Format
		err       string
	}{
		{"/x/claude_desktop_config.json", `{"mcpServers": {}}`, ClaudeDesktop, ""},
		{"/p/.mcp.json", `{"mcpServers": {}}`, ClaudeCode, ""},
		{"/home/u/.claude.json", `{"mcpServers": {}}`, ClaudeCode, ""},
		{"/p/.cursor/mcp.json", `{"mcpServers": {}}`, Cursor, ""},
		{"/x/servers.json", `{"mcpServers": {}}`, MCPServers, ""},
		{"/p/.vscode/mcp.json", `{"servers": {}}`, VSCode, ""},
		{"/x/anything.json", `{"servers": {}, "inputs": []}`, VSCode, ""},
		{"/u/settings.json", `{"editor.fontSize": 12, "mcp": {"servers": {"a": {"command": "x"}}}}`, VSCode, ""},
		{"/x/config.toml", "[mcp_servers.a]\ncommand = \"x\"\n", Codex, ""},
		{"/x/codex-config", "[mcp_servers.a]\ncommand = \"x\"\n", Codex, ""},
		{"/x/a.json", `{"other": 1}`, "", "no MCP servers found"},
		{"/x/a.json", `[1, 2]`, "", "want a JSON object"},
		{"/x/a.json", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"\n  }\n", "", "line 5"},
		{"/x/a.toml", "model = 1\n", "", "want [mcp_servers.NAME] tables"},
		{"/x/a.toml", "[mcp_servers\n", "", "to end table name"},
		{"/x/a.json", `{"mcpServers": [1]}`, "", "want an object of servers"},
	}
	for _, tt := range tests {
		r, err := Convert([]byte(tt.src), Options{Name: tt.name})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Convert(%s, %q) error = %v, want %q", tt.name, tt.src, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Convert(%s): %v", tt.name, err)
			continue
		}
		if r.Format != tt.want {
			t.Errorf("Convert(%s).Format = %s, want %s", tt.name, r.Format, tt.want)
		}
	}
}

func TestJSONC(t *testing.T) {
	src := `{
  // a comment with "quotes" and a , comma
  "servers": { /* block
  comment */
    "a": {"command": "x", "args": ["//not a comment", "/*nor this*/", "trailing,]"],},
  },
}`
	r := convertJSON(t, "/p/.vscode/mcp.json", src)
	if len(r.Servers) != 1 {
		t.Fatalf("servers = %+v", r.Servers)
	}
	if diff := cmp.Diff([]string{"//not a comment", "/*nor this*/", "trailing,]"}, r.Servers[0].Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
}

func TestVSCodeReferences(t *testing.T) {
	src := `{"inputs": [{"id": "tok", "type": "promptString", "password": true}], "servers": {"a": {
		"command": "${userHome}/bin/s", "args": ["${workspaceFolder}/x", "${input:tok}"],
		"env": {"A": "${env:PATH}", "B": "${workspaceFolderBasename}", "C": "${config:x.y}"}}}}`
	r, err := Convert([]byte(src), Options{Name: "/w/.vscode/mcp.json", WorkspaceFolder: "/w", Home: "/h"})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Servers[0]
	if s.Command != "/h/bin/s" || s.Args[0] != "/w/x" || s.Args[1] != "${TOK}" {
		t.Errorf("command %q args %q", s.Command, s.Args)
	}
	want := map[string]string{"A": "${PATH}", "B": "${WORKSPACEFOLDERBASENAME}", "C": "${CONFIG_X_Y}"}
	if diff := cmp.Diff(want, s.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	parses(t, r)
	// Without a workspace folder, the reference becomes a variable to export.
	r, err = Convert([]byte(src), Options{Name: "mcp.json"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Servers[0].Args[0]; got != "${WORKSPACEFOLDER}/x" {
		t.Errorf("args[0] = %q", got)
	}
}

// A secret's variable is named after its key; two different secrets under one key
// get distinct names, and one secret used twice is one variable.
func TestSecretVariableNames(t *testing.T) {
	r := convertJSON(t, "mcp.json", `{"mcpServers": {
		"a": {"command": "x", "env": {"TOKEN": "first-secret-value"}},
		"b": {"command": "x", "env": {"TOKEN": "second-secret-value"}},
		"c": {"command": "x", "env": {"TOKEN": "first-secret-value"}},
		"d": {"url": "https://u:pw-secret@h/mcp?access_token=q-secret&x=1"}
	}}`)
	got := map[string]string{}
	for _, s := range r.Servers {
		for k, v := range s.Env {
			got[s.Name+"."+k] = v
		}
		for k, v := range s.Headers {
			got[s.Name+".headers."+k] = v
		}
		if s.URL != "" {
			got[s.Name+".url"] = s.URL
		}
	}
	want := map[string]string{
		"a.TOKEN":                 "${TOKEN}",
		"b.TOKEN":                 "${B_TOKEN}",
		"c.TOKEN":                 "${TOKEN}",
		"d.headers.Authorization": "Basic ${D_BASIC_AUTH}",
		"d.url":                   "https://h/mcp?access_token=${D_ACCESS_TOKEN}&x=1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, s := range []string{"first-secret-value", "second-secret-value", "pw-secret", "q-secret"} {
		if strings.Contains(string(r.TOML), s) {
			t.Errorf("secret %q in the TOML", s)
		}
	}
	c, err := r.Config(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Servers {
		if s.Name == "d" {
			if s.Headers["Authorization"] != "Basic dTpwdy1zZWNyZXQ=" || s.URL != "https://h/mcp?access_token=q-secret&x=1" {
				t.Errorf("in memory: %q %q", s.Headers, s.URL)
			}
		}
		if s.Name == "b" && s.Env["TOKEN"] != "second-secret-value" {
			t.Errorf("in memory b.TOKEN = %q", s.Env["TOKEN"])
		}
	}
}

// Result.Config takes a secret from the source before the environment (it is what
// the source ran with), and names a variable that is set nowhere.
func TestConfigLookup(t *testing.T) {
	r := convertJSON(t, ".mcp.json", `{"mcpServers": {
		"a": {"command": "x", "env": {"GITHUB_TOKEN": "ghp_fromthefile0123456789", "OTHER": "${OTHER}"}}
	}}`)
	env := func(name string) (string, bool) {
		switch name {
		case "GITHUB_TOKEN":
			return "from-env", true
		case "HOME":
			return "/h", true
		}
		return "", false
	}
	if _, err := r.Config(env); err == nil || !strings.Contains(err.Error(), "environment variable OTHER is not set") {
		t.Fatalf("err = %v, want OTHER unset", err)
	}
	env2 := func(name string) (string, bool) {
		if name == "OTHER" {
			return "o", true
		}
		return env(name)
	}
	c, err := r.Config(env2)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Servers[0].Env["GITHUB_TOKEN"]; got != "ghp_fromthefile0123456789" {
		t.Errorf("GITHUB_TOKEN = %q, want the file's value", got)
	}
}

func TestCodexMapping(t *testing.T) {
	r := convertJSON(t, "config.toml", `
[mcp_servers.a]
command = "x"
startup_timeout_ms = 2500
tool_timeout_sec = 1.5
cwd = "/srv"

[mcp_servers.b]
url = "https://h/mcp"
bearer_token = "inline-secret-0123456789"
`)
	a, b := r.Servers[0], r.Servers[1]
	if a.ConnectTimeout.String() != "2.5s" || a.CallTimeout.String() != "1.5s" || a.Cwd != "/srv" {
		t.Errorf("a = %+v", a)
	}
	if b.Headers["Authorization"] != "Bearer ${B_TOKEN}" {
		t.Errorf("b headers = %v", b.Headers)
	}
	c := parses(t, r)
	if c.Servers[0].ConnectTimeout.String() != "2.5s" {
		t.Errorf("parsed connect timeout %s", c.Servers[0].ConnectTimeout)
	}
	if strings.Contains(string(r.TOML), "inline-secret") {
		t.Errorf("secret in TOML")
	}
}

func TestEmpty(t *testing.T) {
	r := convertJSON(t, "mcp.json", `{"mcpServers": null}`)
	if !strings.Contains(string(r.TOML), "No server could be imported") {
		t.Errorf("TOML:\n%s", r.TOML)
	}
	parses(t, r)
}
