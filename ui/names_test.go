package ui

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// npmTools are the real tool names (and the first words of the descriptions) of
// the npm reference servers, read from
// testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/tools and
// server-filesystem/dist/index.js. They are served in-process here, so the golden
// files do not depend on Node.
var npmTools = map[string][][2]string{
	"everything": {
		{"echo", "Echoes back the input string"},
		{"get-annotated-message", "Demonstrates how annotations can be used to provide metadata about content."},
		{"get-env", "Returns all environment variables, helpful for debugging MCP server configuration"},
		{"get-resource-links", "Returns up to ten resource links that reference different types of resources"},
		{"get-resource-reference", "Returns a resource reference that can be used by MCP clients"},
		{"get-roots-list", "Lists the current MCP roots provided by the client."},
		{"get-structured-content", "Returns structured content along with an output schema for client data validation"},
		{"get-sum", "Returns the sum of two numbers"},
		{"get-tiny-image", "Returns a tiny MCP logo image."},
		{"gzip-file-as-resource", "Compresses a single file using gzip compression."},
		{"simulate-research-query", "Simulates a research query"},
		{"toggle-simulated-logging", "Toggles simulated, random-leveled logging on or off."},
		{"toggle-subscriber-updates", "Toggles simulated resource subscription updates on or off."},
		{"trigger-elicitation-request", "Trigger a Request from the Server for User Elicitation"},
		{"trigger-elicitation-request-async", "Trigger an async elicitation request that the CLIENT executes as a background task."},
		{"trigger-long-running-operation", "Demonstrates a long running operation with progress updates."},
		{"trigger-sampling-request", "Trigger a Request from the Server for LLM Sampling"},
		{"trigger-sampling-request-async", "Trigger an async sampling request that the CLIENT executes as a background task."},
		{"trigger-url-elicitation", "Trigger a URL elicitation so the client can direct the user to a browser flow."},
	},
	"filesystem": {
		{"create_directory", "Create a new directory or ensure a directory exists."},
		{"directory_tree", "Get a recursive tree view of files and directories as a JSON structure."},
		{"edit_file", "Make line-based edits to a text file."},
		{"get_file_info", "Retrieve detailed metadata about a file or directory."},
		{"list_allowed_directories", "Returns the list of directories that this server is allowed to access."},
		{"list_directory", "Get a detailed listing of all files and directories in a specified path."},
		{"list_directory_with_sizes", "Get a detailed listing of all files and directories in a specified path, including sizes."},
		{"move_file", "Move or rename files and directories."},
		{"read_file", "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead."},
		{"read_media_file", "Read an image or audio file."},
		{"read_multiple_files", "Read the contents of multiple files simultaneously."},
		{"read_text_file", "Read the complete contents of a file from the file system as text."},
		{"search_files", "Recursively search for files and directories matching a pattern."},
		{"write_file", "Create a new file or completely overwrite an existing file with new content."},
	},
	// server-memory/dist/index.js
	"memory": {
		{"add_observations", "Add new observations to existing entities in the knowledge graph"},
		{"create_entities", "Create multiple new entities in the knowledge graph"},
		{"create_relations", "Create multiple new relations between entities in the knowledge graph."},
		{"delete_entities", "Delete multiple entities and their associated relations from the knowledge graph"},
		{"delete_observations", "Delete specific observations from entities in the knowledge graph"},
		{"delete_relations", "Delete multiple relations from the knowledge graph"},
		{"open_nodes", "Open specific nodes in the knowledge graph by their names"},
		{"read_graph", "Read the entire knowledge graph"},
		{"search_nodes", "Search for nodes in the knowledge graph based on a query"},
	},
}

// npmHarness serves the npm reference servers' tool names in-process.
func npmHarness(t *testing.T, w, h int) *harness {
	t.Helper()
	return npmHarnessPump(t, w, h, false, "everything", "filesystem")
}

// npmHarnessPump is npmHarness of the named servers, whose events reach the
// model when pump is set.
func npmHarnessPump(t *testing.T, w, h int, pump bool, servers ...string) *harness {
	t.Helper()
	inproc := map[string]*mcp.Server{}
	cfg := &config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: config.DefaultApprovalTimeout}
	for _, name := range servers {
		s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
		for _, tl := range npmTools[name] {
			s.AddTool(&mcp.Tool{Name: tl[0], Description: tl[1], InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
		}
		inproc[name] = s
		cfg.Servers = append(cfg.Servers, config.Server{Name: name, Transport: config.TransportStdio, Command: "npx", Args: []string{name},
			ConnectTimeout: config.DefaultConnectTimeout, CallTimeout: config.DefaultCallTimeout, Trust: trust.Untrusted})
	}
	sess := startManager(t, cfg, inproc)
	return newHarnessFor(t, sess, w, h, pump, Options{Title: "npm"})
}

// toolRow matches a row of the tools pane: cursor, tier glyph (and word), name.
var toolRow = regexp.MustCompile(`^[▸ ][ *][○◐▲⊘?](?: (?:read|write|destructive|blocked|unknown))?\s+(\S+)`)

// toolRows returns the name cells of the tools pane's rows on screen.
func toolRows(screen string) []string {
	var names []string
	for _, l := range strings.Split(screen, "\n") {
		i := strings.Index(l, "││")
		if i < 0 {
			continue
		}
		if m := toolRow.FindStringSubmatch(l[i+len("││"):]); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

// At every size the npm servers' names can be told apart, no two
// rows look the same, and the focused row's full name is on screen.
func TestNames_NpmServersGolden(t *testing.T) {
	for _, sz := range [][2]int{{60, 20}, {80, 24}, {120, 40}, {200, 50}} {
		h := npmHarness(t, sz[0], sz[1])
		// Select a long name: down to the first trigger- tool.
		for i, n := range rowNames(h.m) {
			if n == "everything__trigger-long-running-operation" {
				h.m.tools.Cursor = i
				h.m.tools.Clamp()
			}
		}
		screen := h.plain()
		golden(t, "names_npm_"+itoa(sz[0])+"x"+itoa(sz[1])+".golden", screen)
		rows := toolRows(screen)
		if len(rows) < 8 {
			t.Fatalf("%dx%d: only %d tool rows found:\n%s", sz[0], sz[1], len(rows), screen)
		}
		seen := map[string]bool{}
		for _, r := range rows {
			if seen[r] {
				t.Errorf("%dx%d: two rows show %q:\n%s", sz[0], sz[1], r, screen)
			}
			seen[r] = true
		}
		if !strings.Contains(strings.ReplaceAll(screen, "│", ""), "everything__trigger-long-running-operation") {
			// It may wrap on a narrow screen: join the pane's lines.
			flat := strings.Join(strings.Fields(strings.ReplaceAll(ansi.Strip(screen), "│", " ")), "")
			if !strings.Contains(flat, "everything__trigger-long-running-operation") {
				t.Errorf("%dx%d: the focused tool's full name is nowhere on screen:\n%s", sz[0], sz[1], screen)
			}
		}
	}
}

// The gateway's address is never cut on the title line; the
// session's title gives way first.
func TestNames_GatewayURLWhole(t *testing.T) {
	for _, w := range []int{60, 80} {
		sess, _ := newDemo(t)
		h := newHarnessFor(t, sess, w, 24, false, Options{Title: "/home/someone/projects/airlock/config.toml", GatewayURL: "http://127.0.0.1:7991/mcp"})
		first := strings.Split(h.plain(), "\n")[0]
		if !strings.Contains(first, "http://127.0.0.1:7991/mcp") {
			t.Errorf("%d columns: the gateway URL is cut: %q", w, first)
		}
	}
}
