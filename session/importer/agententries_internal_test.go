package importer

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// secretFiles writes two files shaped like what a hostile link points at: an AWS
// credentials file (TOML-like) and a process environment (NUL-separated).
func secretFiles(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials")
	if err := os.WriteFile(creds, []byte("[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := filepath.Join(dir, "environ")
	if err := os.WriteFile(environ, []byte("GITHUB_TOKEN=ghp_SECRETSECRETSECRET1234\x00PATH=/usr/bin\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{creds, environ}
}

func quotesSecret(s string) bool {
	for _, w := range []string{"SECRET", "wJalr", "ghp_", "aws_secret", "GITHUB_TOKEN", "default"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// A file that does not parse is said by where, never by what it holds: the warning
// goes to CI logs and annotations.
func TestAgentConfigParseErrorQuotesNothing(t *testing.T) {
	for _, src := range secretFiles(t) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		parsers := map[string]func([]byte, AgentMatch) ([]AgentEntry, error){
			"codex": parseCodexEntries, "claude": parseClaudeProject, "gemini": parseGeminiEntries,
			"claude-user": func(b []byte, m AgentMatch) ([]AgentEntry, error) { return parseClaudeUser(b, m, "/p") },
		}
		for name, parse := range parsers {
			_, err := parse(b, AgentMatch{})
			if err == nil {
				t.Errorf("%s parsed %s", name, src)
				continue
			}
			if quotesSecret(err.Error()) {
				t.Errorf("%s on %s: the warning quotes the file: %v", name, filepath.Base(src), err)
			}
			if !strings.Contains(err.Error(), "at line ") {
				t.Errorf("%s on %s: no position: %v", name, filepath.Base(src), err)
			}
		}
	}
	// A well-formed file of the wrong shape names no key of it either.
	_, err := parseGeminiEntries([]byte(`{"mcpServers": {"wJalrXUtnFEMI": 1}, "x": ["wJalrXUtnFEMI"]}`+"\n"+`{"mcpServers": ["wJalrXUtnFEMI"]}`), AgentMatch{})
	if err == nil || quotesSecret(err.Error()) {
		t.Errorf("wrong shape: %v", err)
	}
	if _, err := parseGeminiEntries([]byte(`{"mcpServers": ["wJalrXUtnFEMI"]}`), AgentMatch{}); err == nil || quotesSecret(err.Error()) || !strings.Contains(err.Error(), "at line 1, column 16") {
		t.Errorf("wrong shape: %v", err)
	}
}

// A project's agent config that is a link (a cloned repo's .codex/config.toml ->
// ~/.aws/credentials) is refused unread; the user's own files may be links.
func TestAgentEntriesRefusesProjectLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	secrets := secretFiles(t)
	home, cwd := t.TempDir(), t.TempDir()
	for _, d := range []string{".codex", ".gemini"} {
		if err := os.MkdirAll(filepath.Join(cwd, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(cwd, ".codex", "config.toml"):    secrets[0],
		filepath.Join(cwd, ".mcp.json"):                secrets[1],
		filepath.Join(cwd, ".gemini", "settings.json"): secrets[0],
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	// The user's Codex config lives in a dotfiles folder, linked.
	dotfiles := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(dotfiles, []byte("[mcp_servers.airlock]\nurl = \"http://127.0.0.1:7878/mcp\"\ntool_timeout_sec = 900\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dotfiles, filepath.Join(home, ".codex", "config.toml")); err != nil {
		t.Fatal(err)
	}
	entries, problems := AgentEntries(Env{GOOS: runtime.GOOS, Home: home, Cwd: cwd}, AgentMatch{Addrs: []string{"127.0.0.1:7878"}})
	if len(entries) != 1 || entries[0].Agent != "codex" || entries[0].File != filepath.Join(home, ".codex", "config.toml") {
		t.Errorf("entries = %+v, want the linked home Codex entry only", entries)
	}
	if len(problems) != len(links) {
		t.Errorf("problems = %q, want one per project link", problems)
	}
	for _, p := range problems {
		if quotesSecret(p) || !strings.Contains(p, "link") {
			t.Errorf("problem %q: want a refused link, nothing of the file", p)
		}
	}
}
