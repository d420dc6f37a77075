package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveFiles plays a stdio server whose read_file opens its path argument as given,
// as an ordinary file server does.
func serveFiles() int {
	s := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
	type in struct {
		Path string `json:"path" jsonschema:"The file to read."`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "read_file", Description: "Reads a file.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
			b, err := os.ReadFile(a.Path)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
		})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
	return 0
}

// A deny rule with a typo in its field ("pth" for "path") protects nothing if it is
// only a notice: check fails naming the rule, its key and line, and the tool asks for
// every call until it is fixed, so the file it meant to protect is not read unasked.
func TestCheck_BrokenDenyRuleFailsAndAsks(t *testing.T) {
	self := selfPath(t)
	dir := t.TempDir()
	secret := filepath.Join(dir, ".ssh", "id_rsa")
	writeFile(t, secret, "PRIVATE KEY")
	plain := filepath.Join(dir, "notes.txt")
	writeFile(t, plain, "plain notes")
	cfg := writeConfig(t, "[servers.files]\ncommand = "+quoteTOML(self)+"\ntrust = \"trusted\"\n[servers.files.env]\nAIRLOCK_TEST_FILE_SERVER = \"1\"\n"+
		"[policy]\nread = \"allow\"\n"+
		"[[servers.files.tools.read_file.rules]]\nwhen = { pth = { glob = \"**/.ssh/**\" } }\npolicy = \"deny\"\nreason = \"no keys\"\n")
	state := t.TempDir()
	r := airlockIn(t, state, "", "check", "--config", cfg)
	want := `rule servers.files.tools.read_file.rules[0] (config.toml:8): when.pth: the tool's input schema declares no field "pth"`
	if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stdout, want) {
		t.Errorf("check: exit %d, want 1 naming %q\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
	for _, p := range []string{secret, plain} {
		r = airlockIn(t, state, "", "call", "files", "read_file", "--config", cfg, "--args", `{"path":`+quoteTOML(p)+`}`)
		if r.code != 5 || strings.Contains(r.stdout, "PRIVATE KEY") || strings.Contains(r.stdout, "plain notes") ||
			!strings.Contains(r.stderr, "can never match") || !strings.Contains(r.stderr, "no terminal to ask on") {
			t.Errorf("call %s: exit %d, want 5 (asked, no terminal)\nstdout:\n%s\nstderr:\n%s", p, r.code, r.stdout, r.stderr)
		}
	}
}

// `airlock rules list` lists every rule in effect: the config's with file and line,
// the remembered ones with their id, each with its effect, conditions, how often it
// matched and when it last did (counted from the audit log, across processes).
func TestRulesList_EveryRuleWithMatchesAndLastMatch(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, "state_dir = \""+state+"\"\n[servers.web]\ncommand = \"airlock\"\nargs = [\"demo-server\", \"web\"]\ntrust = \"trusted\"\n"+
		"[[servers.web.tools.fetch_url.rules]]\nwhen = { url = { host = \"blog.example.com\" } }\npolicy = \"deny\"\nreason = \"no blogs\"\n"+
		"[[servers.web.tools.fetch_url.rules]]\nwhen = { url = { host = \"example.com\" } }\npolicy = \"allow\"\n")
	doc := "version = 1\n[[rules]]\nid = \"r-0000abcd\"\nserver = \"web\"\ntool = \"fetch_url\"\nwhen = { url = { host = [\"docs.example.com\"] } }\npolicy = \"allow\"\nfrom = \"the dialog, call c-1 in context you\"\ncreated = 2026-11-30T12:00:00Z\n"
	if err := os.WriteFile(filepath.Join(filepath.Dir(cfg), "rules.toml"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"https://blog.example.com/a", "https://blog.example.com/b", "https://example.com/"} {
		airlock(t, "", "call", "web", "fetch_url", "--config", cfg, "--args", `{"url":"`+u+`"}`)
	}
	r := airlock(t, "", "rules", "list", "--config", cfg)
	if r.code != 0 {
		t.Fatalf("rules list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(r.stdout, "\n")
	find := func(name string) []string {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				return f
			}
		}
		t.Fatalf("rules list has no %s:\n%s", name, r.stdout)
		return nil
	}
	deny := strings.Join(find("servers.web.tools.fetch_url.rules[0]"), " ")
	if !strings.Contains(deny, "deny url host [blog.example.com] (no blogs) 2 ") || !strings.HasSuffix(deny, " config.toml:6") || !strings.Contains(deny, time.Now().Format(time.DateOnly)) {
		t.Errorf("the deny rule's line: %q", deny)
	}
	allow := strings.Join(find("servers.web.tools.fetch_url.rules[1]"), " ")
	if !strings.Contains(allow, "allow url host [example.com] 1 ") || !strings.HasSuffix(allow, " config.toml:10") {
		t.Errorf("the allow rule's line: %q", allow)
	}
	saved := strings.Join(find("r-0000abcd"), " ")
	if !strings.Contains(saved, "allow url host [docs.example.com] 0 - rules.toml") {
		t.Errorf("the remembered rule's line: %q", saved)
	}
}
