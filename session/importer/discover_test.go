package importer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func lookupOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// `airlock import` with no file knows where each client keeps its servers
// on each platform; the table is pure, so every platform is tested here.
func TestLocationsPerPlatform(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  Env
		want []Location
	}{
		{"linux", Env{GOOS: "linux", Home: "/home/ana", Cwd: "/src/app"}, []Location{
			{"Claude Code", true, "/src/app/.mcp.json"},
			{"Cursor", true, "/src/app/.cursor/mcp.json"},
			{"VS Code", true, "/src/app/.vscode/mcp.json"},
			{"Claude Desktop", false, "/home/ana/.config/Claude/claude_desktop_config.json"},
			{"Claude Code", false, "/home/ana/.claude.json"},
			{"Cursor", false, "/home/ana/.cursor/mcp.json"},
			{"VS Code", false, "/home/ana/.config/Code/User/mcp.json"},
			{"VS Code", false, "/home/ana/.config/Code/User/settings.json"},
			{"Codex", false, "/home/ana/.codex/config.toml"},
		}},
		{"linux with XDG_CONFIG_HOME and CODEX_HOME", Env{GOOS: "linux", Home: "/home/ana",
			Lookup: lookupOf(map[string]string{"XDG_CONFIG_HOME": "/cfg", "CODEX_HOME": "/opt/codex"})}, []Location{
			{"Claude Desktop", false, "/cfg/Claude/claude_desktop_config.json"},
			{"Claude Code", false, "/home/ana/.claude.json"},
			{"Cursor", false, "/home/ana/.cursor/mcp.json"},
			{"VS Code", false, "/cfg/Code/User/mcp.json"},
			{"VS Code", false, "/cfg/Code/User/settings.json"},
			{"Codex", false, "/opt/codex/config.toml"},
		}},
		{"darwin", Env{GOOS: "darwin", Home: "/Users/ana", Lookup: lookupOf(map[string]string{"XDG_CONFIG_HOME": "/Users/ana/.config"})}, []Location{
			{"Claude Desktop", false, "/Users/ana/Library/Application Support/Claude/claude_desktop_config.json"},
			{"Claude Code", false, "/Users/ana/.claude.json"},
			{"Cursor", false, "/Users/ana/.cursor/mcp.json"},
			{"VS Code", false, "/Users/ana/Library/Application Support/Code/User/mcp.json"},
			{"VS Code", false, "/Users/ana/Library/Application Support/Code/User/settings.json"},
			{"Codex", false, "/Users/ana/.codex/config.toml"},
		}},
		{"windows", Env{GOOS: "windows", Home: `C:\Users\ana`, Cwd: `D:\src\app`,
			Lookup: lookupOf(map[string]string{"APPDATA": `C:\Users\ana\AppData\Roaming`, "CODEX_HOME": "relative-ignored"})}, []Location{
			{"Claude Code", true, `D:\src\app\.mcp.json`},
			{"Cursor", true, `D:\src\app\.cursor\mcp.json`},
			{"VS Code", true, `D:\src\app\.vscode\mcp.json`},
			{"Claude Desktop", false, `C:\Users\ana\AppData\Roaming\Claude\claude_desktop_config.json`},
			{"Claude Code", false, `C:\Users\ana\.claude.json`},
			{"Cursor", false, `C:\Users\ana\.cursor\mcp.json`},
			{"VS Code", false, `C:\Users\ana\AppData\Roaming\Code\User\mcp.json`},
			{"VS Code", false, `C:\Users\ana\AppData\Roaming\Code\User\settings.json`},
			{"Codex", false, `C:\Users\ana\.codex\config.toml`},
		}},
		{"windows without APPDATA", Env{GOOS: "windows", Home: `C:\Users\ana`}, []Location{
			{"Claude Desktop", false, `C:\Users\ana\AppData\Roaming\Claude\claude_desktop_config.json`},
			{"Claude Code", false, `C:\Users\ana\.claude.json`},
			{"Cursor", false, `C:\Users\ana\.cursor\mcp.json`},
			{"VS Code", false, `C:\Users\ana\AppData\Roaming\Code\User\mcp.json`},
			{"VS Code", false, `C:\Users\ana\AppData\Roaming\Code\User\settings.json`},
			{"Codex", false, `C:\Users\ana\.codex\config.toml`},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Locations(tt.env)); diff != "" {
				t.Errorf("locations (-want +got):\n%s", diff)
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Discover reads the first list with servers, and names every other file it found
// with why it was not used.
func TestDiscover(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	locs := Locations(Env{GOOS: "linux", Home: home, Cwd: cwd})
	if _, _, found, err := Discover(locs); !errors.Is(err, ErrNoneFound) || len(found) != 0 {
		t.Fatalf("empty home: %v %v", found, err)
	}

	// ~/.claude.json without user servers is skipped, with the reason; Claude
	// Desktop's list is read; Cursor's is found but not read.
	write(t, filepath.Join(home, ".claude.json"), `{"numStartups": 3}`)
	write(t, filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"), `{"mcpServers": {"Docs": {"command": "npx", "args": ["-y", "docs-server"], "env": {"DOCS_TOKEN": "ghp_notarealtoken0123456789abcdef"}}}}`)
	write(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"web": {"url": "https://mcp.example/mcp"}}}`)
	write(t, filepath.Join(home, ".codex", "config.toml"), `model = "x"`)
	r, at, found, err := Discover(locs)
	if err != nil {
		t.Fatal(err)
	}
	if at.Client != "Claude Desktop" || r.Format != ClaudeDesktop || len(r.Servers) != 1 || r.Servers[0].Name != "docs" {
		t.Fatalf("read %+v: %v %+v", at, r.Format, r.Servers)
	}
	if strings.Contains(string(r.TOML), "ghp_notarealtoken") {
		t.Error("secret in the output")
	}
	var got []string
	for _, f := range found {
		s := fmt.Sprintf("%s %s: %d", f.Client, filepath.Base(f.Path), f.Servers)
		if f.Err != nil {
			s += ": " + f.Err.Error()
		}
		got = append(got, s)
	}
	want := []string{
		"Claude Code .claude.json: 0: importing " + filepath.Join(home, ".claude.json") + ": no MCP servers found: want mcpServers (Claude Desktop, Claude Code, Cursor), servers (VS Code) or [mcp_servers] (Codex)",
		"Cursor mcp.json: 1",
		"Codex config.toml: 0: importing " + filepath.Join(home, ".codex", "config.toml") + ": no MCP servers found: want [mcp_servers.NAME] tables (Codex)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("found (-want +got):\n%s", diff)
	}

	// A project's .mcp.json comes first.
	write(t, filepath.Join(cwd, ".mcp.json"), `{"mcpServers": {"proj": {"command": "proj-server"}}}`)
	if _, at, _, err := Discover(locs); err != nil || at.Client != "Claude Code" || !at.Project {
		t.Errorf("with a project file: %+v %v", at, err)
	}
	// VS Code's user mcp.json is read by the VS Code format.
	home2 := t.TempDir()
	write(t, filepath.Join(home2, ".config", "Code", "User", "mcp.json"), `{"servers": {"gh": {"type": "http", "url": "https://api.example/mcp"}}}`)
	if r, at, _, err := Discover(Locations(Env{GOOS: "linux", Home: home2})); err != nil || at.Client != "VS Code" || r.Format != VSCode {
		t.Errorf("VS Code user mcp.json: %+v %v", at, err)
	}
	// A folder where a file should be is named, not read.
	home3 := t.TempDir()
	os.MkdirAll(filepath.Join(home3, ".cursor", "mcp.json"), 0o700)
	if _, _, found, err := Discover(Locations(Env{GOOS: "linux", Home: home3})); !errors.Is(err, ErrNoneFound) || len(found) != 1 || found[0].Err == nil {
		t.Errorf("folder at a location: %+v %v", found, err)
	}
}
