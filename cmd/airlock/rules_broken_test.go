package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	secret := filepath.Join(dir, ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(plain, []byte("plain notes"), 0o600); err != nil {
		t.Fatal(err)
	}
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
