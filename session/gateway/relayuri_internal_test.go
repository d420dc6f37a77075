package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resource links and embedded resources in a server's content are served as relay
// URIs; the server's own values (what the person saw, what the audit holds) are left
// alone.
func TestRelayContent_RewritesLinksWithoutTouchingTheOriginal(t *testing.T) {
	link := &mcp.ResourceLink{URI: "file:///my notes.txt", Name: "notes"}
	emb := &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://static/1", Text: "hi"}}
	text := &mcp.TextContent{Text: "see test://static/1"}
	in := []mcp.Content{text, link, emb, &mcp.EmbeddedResource{}, nil}
	before := []mcp.Content{&mcp.TextContent{Text: "see test://static/1"},
		&mcp.ResourceLink{URI: "file:///my notes.txt", Name: "notes"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://static/1", Text: "hi"}}, &mcp.EmbeddedResource{}, nil}

	out := relayContent("docs", in)

	if diff := cmp.Diff(before, in); diff != "" {
		t.Errorf("the server's content changed (-before +after):\n%s", diff)
	}
	want := []mcp.Content{&mcp.TextContent{Text: "see test://static/1"},
		&mcp.ResourceLink{URI: "airlock://docs?file:///my%20notes.txt", Name: "notes"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "airlock://docs/test://static/1", Text: "hi"}}, &mcp.EmbeddedResource{}, nil}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("relayed content (-want +got):\n%s", diff)
	}
	if plain := []mcp.Content{text}; &relayContent("docs", plain)[0] != &plain[0] {
		t.Error("content without links was copied")
	}
}
