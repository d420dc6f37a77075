package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/trust"
)

// namesTools are a 128-byte name, a dotted one and two that differ from it only in
// the character agents' clients rewrite.
var namesTools = []string{strings.Repeat("read_every_note_", 8), "get.item", "get-item", "get_item"}

// longTools are one family of a mirror's tools with long dotted names (the last
// 64 bytes long), which share their start and differ at their end.
var longTools = []string{"github.repos.content.get", "github.repos.content.delete_permanently", "github.repos.content.delete_permanently_with_all_history_v2.fina"}

// serveNames serves namesTools over stdio (longTools, without hints, when
// AIRLOCK_TEST_NAMES_SERVER is "long"), each answering with its own name.
func serveNames() int {
	s := mcp.NewServer(&mcp.Implementation{Name: "names", Version: "1"}, nil)
	tools, hints := namesTools, &mcp.ToolAnnotations{ReadOnlyHint: true}
	if os.Getenv("AIRLOCK_TEST_NAMES_SERVER") == "long" {
		tools, hints = longTools, nil
	}
	for _, n := range tools {
		s.AddTool(&mcp.Tool{Name: n, InputSchema: map[string]any{"type": "object"}, Annotations: hints},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "reached " + n}}}, nil
			})
	}
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
	return 0
}

func namesConfig(t *testing.T, extra string) string {
	t.Helper()
	self := selfPath(t)
	return writeConfig(t, extra+"[servers.notes]\ncommand = "+quoteTOML(self)+"\ntrust = \"trusted\"\n[servers.notes.env]\nAIRLOCK_TEST_NAMES_SERVER = \"1\"\n")
}

func servedNames(t *testing.T, cfg string) map[string]string {
	t.Helper()
	r := airlock(t, "", "check", "--config", cfg, "--json")
	if r.code != 0 {
		t.Fatalf("check: exit %d\n%s", r.code, r.stderr)
	}
	got, err := strictCheckJSON(r.stdout)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tl := range got.Tools {
		out[tl.Name] = tl.ServedName
	}
	return out
}

// check --json says the name each tool is served under; two runs (two processes,
// two server processes) say the same; check's text says which are mapped; and
// `airlock call` takes the served name and reaches that tool.
func TestCheckShowsServedNamesAndCallTakesThem(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	cfg := namesConfig(t, "")
	first := servedNames(t, cfg)
	if len(first) != len(namesTools) {
		t.Fatalf("check lists %v", first)
	}
	for tool, served := range first {
		if !valid.MatchString(served) || len(served) > trust.DefaultNameBudget {
			t.Errorf("%s: served_name %q is no name every client accepts within %d bytes", tool, served, trust.DefaultNameBudget)
		}
	}
	if first["get-item"] != "notes__get-item" || first["get_item"] != "notes__get_item" || !strings.HasPrefix(first["get.item"], "notes__get_item_") {
		t.Errorf("served names %v", first)
	}
	if second := servedNames(t, cfg); !mapsEqual(first, second) {
		t.Errorf("a second run serves other names:\n%v\n%v", first, second)
	}
	r := airlock(t, "", "check", "--config", cfg)
	if want := "notes__get.item: agents call it " + first["get.item"]; !strings.Contains(r.stdout, want) {
		t.Errorf("check's text lacks %q:\n%s", want, r.stdout)
	}
	for _, tool := range []string{"get.item", namesTools[0]} {
		r := airlock(t, "", "call", first[tool], "--config", cfg)
		if r.code != 0 || !strings.Contains(r.stdout, "reached "+tool) {
			t.Errorf("call %s: exit %d, stdout %q, stderr %q; want it to reach %s", first[tool], r.code, r.stdout, r.stderr, tool)
		}
	}
	// The original dotted name still names the tool for the person.
	if r := airlock(t, "", "call", "notes__get.item", "--config", cfg); r.code != 0 || !strings.Contains(r.stdout, "reached get.item") {
		t.Errorf("call notes__get.item: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// [gateway] name_budget sets the budget: at 20 every served name fits in 20 bytes.
func TestCheckServedNamesFollowTheBudget(t *testing.T) {
	cfg := namesConfig(t, "[gateway]\nlisten = \"127.0.0.1:0\"\nname_budget = 20\n")
	got := servedNames(t, cfg)
	for tool, served := range got {
		if served == "" || len(served) > 20 {
			t.Errorf("%s is served as %q, want at most 20 bytes", tool, served)
		}
	}
	bad := writeConfig(t, "[gateway]\nname_budget = 65\n")
	if r := airlock(t, "", "check", "--config", bad); r.code != 1 || !strings.Contains(r.stderr, "gateway.name_budget") || !strings.Contains(r.stderr, filepath.Base(bad)+":2") {
		t.Errorf("check with name_budget 65: exit %d, stderr %q", r.code, r.stderr)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
