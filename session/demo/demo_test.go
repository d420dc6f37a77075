package demo

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The protocol versions the tests connect with: the newest handshake-era version and
// go-sdk's default (the 2026-07-28 discover/subscribe flow), since a client may use either.
var protocols = []string{"2025-11-25", ""}

// recorder keeps every JSON-RPC response the client reads, as the bytes the server
// sent, so tests can check the annotations on the wire rather than after go-sdk's
// decoding (which turns an absent readOnlyHint into false).
type recorder struct {
	mu        sync.Mutex
	responses []json.RawMessage
}

type recordingTransport struct {
	mcp.Transport
	rec *recorder
}

func (t recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return recordingConn{c, t.rec}, nil
}

type recordingConn struct {
	mcp.Connection
	rec *recorder
}

func (c recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if r, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.rec.mu.Lock()
		c.rec.responses = append(c.rec.responses, slices.Clone(r.Result))
		c.rec.mu.Unlock()
	}
	return msg, err
}

// rawTool is a tool as it appeared on the wire.
type rawTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
	Annotations map[string]any `json:"annotations"`
}

// lastToolList returns the tools of the last tools/list result the client read.
func (r *recorder) lastToolList(t *testing.T) []rawTool {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, res := range slices.Backward(r.responses) {
		var list struct {
			Tools *[]rawTool `json:"tools"`
		}
		if json.Unmarshal(res, &list) == nil && list.Tools != nil {
			return *list.Tools
		}
	}
	t.Fatal("the client read no tools/list result")
	return nil
}

// connect connects a real go-sdk client to s in-process and returns the session and
// a recorder of what the server sent. protocol "" selects go-sdk's default.
func connect(t *testing.T, s *mcp.Server, opts *mcp.ClientOptions, protocol string) (*mcp.ClientSession, *recorder) {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("connecting server: %v", err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	rec := &recorder{}
	client := mcp.NewClient(&mcp.Implementation{Name: "airlock-test", Version: "0"}, opts)
	cs, err := client.Connect(ctx, recordingTransport{ct, rec}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connecting client: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, rec
}

// listTools lists the tools and returns them as the server sent them, by name.
func listTools(t *testing.T, cs *mcp.ClientSession, rec *recorder) map[string]rawTool {
	t.Helper()
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("listing tools: %v", err)
	}
	tools := map[string]rawTool{}
	for _, tool := range rec.lastToolList(t) {
		tools[tool.Name] = tool
	}
	return tools
}

// call calls a tool and returns its text and whether it was an error result.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", tool, err)
	}
	var texts []string
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("calling %s: content %T, want text", tool, c)
		}
		texts = append(texts, tc.Text)
	}
	return strings.Join(texts, "\n"), res.IsError
}

func TestNames(t *testing.T) {
	got := Names()
	want := []string{"docs", "mail", "notes", "web"}
	if !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
	set := NewSet()
	for _, name := range got {
		if set.Server(name) == nil {
			t.Errorf("NewSet().Server(%q) = nil", name)
		}
	}
	if set.Server("nope") != nil {
		t.Error(`NewSet().Server("nope") != nil`)
	}
	if set.Notes() == nil || set.Notes().Server() != set.Server("notes") {
		t.Error("NewSet().Notes() is not the set's notes server")
	}
}

func TestNewUnknown(t *testing.T) {
	for _, name := range []string{"", "Docs", "email", "notes "} {
		s, err := New(name)
		if !errors.Is(err, ErrUnknownServer) || s != nil {
			t.Errorf("New(%q) = %v, %v; want nil, ErrUnknownServer", name, s, err)
		}
	}
	err := ServeStdio(context.Background(), "nope")
	if !errors.Is(err, ErrUnknownServer) {
		t.Errorf(`ServeStdio("nope") = %v, want ErrUnknownServer`, err)
	}
}

// hints is a tool's annotations as they must appear on the wire.
type hints map[string]any

// wantTools is every demo tool with the exact annotations its server declares on
// purpose. Titles are left out: they are presentation, not a claim about risk.
var wantTools = map[string]map[string]hints{
	"docs": {
		"search_docs": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false},
		"get_doc":     {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false},
	},
	"web": {
		"fetch_url": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": true},
	},
	"notes": {
		"list_notes":  {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false},
		"create_note": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false},
		"delete_note": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false},
	},
	"mail": {
		"send_email": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
	},
}

func TestToolLists(t *testing.T) {
	set := NewSet()
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			single, err := newFromEnv(name, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			for how, s := range map[string]*mcp.Server{"NewSet": set.Server(name), "New": single} {
				cs, rec := connect(t, s, nil, "")
				init := cs.InitializeResult()
				if got, want := init.ServerInfo.Name, "airlock-demo-"+name; got != want {
					t.Errorf("%s: server name = %q, want %q", how, got, want)
				}
				if init.Instructions == "" {
					t.Errorf("%s: server %s has no instructions", how, name)
				}
				tools := listTools(t, cs, rec)
				if got, want := slices.Sorted(maps.Keys(tools)), slices.Sorted(maps.Keys(wantTools[name])); !slices.Equal(got, want) {
					t.Fatalf("%s: tools = %q, want %q", how, got, want)
				}
				for tname, want := range wantTools[name] {
					tool := tools[tname]
					got := hints{}
					for k, v := range tool.Annotations {
						if k != "title" {
							got[k] = v
						}
					}
					if !maps.Equal(got, want) {
						t.Errorf("%s: %s annotations on the wire = %v, want %v", how, tname, got, want)
					}
					if len(tool.Description) < 20 {
						t.Errorf("%s: %s description %q is not useful", how, tname, tool.Description)
					}
					if tool.InputSchema["type"] != "object" {
						t.Errorf("%s: %s input schema type = %v, want object", how, tname, tool.InputSchema["type"])
					}
					props, _ := tool.InputSchema["properties"].(map[string]any)
					for pname, p := range props {
						if d, _ := p.(map[string]any)["description"].(string); d == "" {
							t.Errorf("%s: %s argument %q has no description", how, tname, pname)
						}
					}
				}
			}
		})
	}
}
