package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// servePathFS is a stdio server (AIRLOCK_TEST_PATHFS=1) whose write_file opens the
// path exactly as given, as Python's open does: the system follows links and
// applies ".." after them.
func servePathFS() int {
	s := mcp.NewServer(&mcp.Implementation{Name: "pathfs", Version: "1"}, nil)
	no := false
	type writeArgs struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "write_file", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no}},
		func(_ context.Context, _ *mcp.CallToolRequest, a writeArgs) (*mcp.CallToolResult, any, error) {
			if err := os.WriteFile(a.Path, []byte(a.Content), 0o600); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wrote " + a.Path}}}, nil, nil
		})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
	return 0
}

// `airlock call` with allow ~/project/** and ~/project/cfg -> ../.ssh: a write to
// ~/project/cfg/../.bashrc (~/.bashrc to the system) asks, so without a terminal it is
// denied, ~/.bashrc unchanged, and what it prints says why the rule was set aside.
func TestCall_RuleSetAsideThroughALink(t *testing.T) {
	self := selfPath(t)
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(filepath.Join(home, "project"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("original\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../.ssh", filepath.Join(home, "project", "cfg")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	t.Setenv("HOME", home)
	state := t.TempDir()
	cfg := writeConfig(t, "state_dir = \""+state+"\"\n[servers.fs]\ncommand = \""+self+"\"\ntrust = \"trusted\"\nenv = { AIRLOCK_TEST_PATHFS = \"1\" }\n"+
		"[[servers.fs.tools.write_file.rules]]\nwhen = { path = { glob = \"~/project/**\" } }\npolicy = \"allow\"\n")
	r := airlockIn(t, state, "", "call", "fs", "write_file", "--config", cfg, "--args", `{"path":"`+filepath.Join(home, "project", "notes.txt")+`","content":"ok"}`)
	if r.code != 0 || !strings.Contains(r.stderr, "allows this call") {
		t.Fatalf("a write inside the project: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlockIn(t, state, "", "call", "fs", "write_file", "--config", cfg, "--args", `{"path":"`+filepath.Join(home, "project", "cfg")+`/../.bashrc","content":"pwned"}`)
	if r.code == 0 || !strings.Contains(r.stderr, "rule servers.fs.tools.write_file.rules[0] (config.toml:6) does not apply: path ~/project/cfg/../.bashrc opens ~/.bashrc (~/project/cfg is a link to ~/.ssh)") {
		t.Errorf("a write through the link: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".bashrc")); string(b) != "original\n" {
		t.Errorf("~/.bashrc is now %q", b)
	}
}
