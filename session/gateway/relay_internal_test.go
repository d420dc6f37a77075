package gateway

import (
	"maps"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// goneKeys deletes exactly the keys not wanted and returns them sorted (nil when
// none goes).
func TestGoneKeys(t *testing.T) {
	cases := []struct {
		served, want, gone, left []string
	}{
		{nil, nil, nil, nil},
		{[]string{"a"}, []string{"a"}, nil, []string{"a"}},
		{[]string{"c", "a", "b"}, nil, []string{"a", "b", "c"}, nil},
		{[]string{"d", "b", "c", "a"}, []string{"c", "x"}, []string{"a", "b", "d"}, []string{"c"}},
	}
	for _, c := range cases {
		served := map[string]int{}
		for i, k := range c.served {
			served[k] = i
		}
		want := map[string]bool{}
		for _, k := range c.want {
			want[k] = true
		}
		gone := goneKeys(served, want)
		if !slices.Equal(gone, c.gone) || (gone == nil) != (c.gone == nil) {
			t.Errorf("goneKeys(%q, %q) = %q, want %q", c.served, c.want, gone, c.gone)
		}
		if left := slices.Sorted(maps.Keys(served)); !slices.Equal(left, c.left) {
			t.Errorf("goneKeys(%q, %q) left %q, want %q", c.served, c.want, left, c.left)
		}
	}
}

// A read's and a prompt's results reach the agent with relay URIs and without nil
// entries, never nil themselves, and the server's result is left as it was.
func TestRelayReadAndPromptResult(t *testing.T) {
	if r := relayRead("s", nil); r == nil || r.Contents == nil || len(r.Contents) != 0 {
		t.Errorf("relayRead of nil = %+v, want empty contents", r)
	}
	if r := relayPromptResult("s", nil); r == nil || r.Messages == nil || len(r.Messages) != 0 {
		t.Errorf("relayPromptResult of nil = %+v, want empty messages", r)
	}

	read := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://a", Text: "A"}, nil, {URI: "test://b"}}}
	got := relayRead("docs", read)
	if len(got.Contents) != 2 || got.Contents[0].URI != RelayURI("docs", "test://a") || got.Contents[0].Text != "A" || got.Contents[1].URI != RelayURI("docs", "test://b") {
		t.Errorf("relayRead = %+v", got.Contents)
	}
	if read.Contents[0].URI != "test://a" || read.Contents[1] != nil || len(read.Contents) != 3 {
		t.Errorf("relayRead changed the server's result: %+v", read.Contents)
	}

	prompt := &mcp.GetPromptResult{Description: "d", Messages: []*mcp.PromptMessage{
		nil,
		{Role: "user", Content: &mcp.ResourceLink{URI: "test://c", Name: "c"}},
		{Role: "assistant"},
	}}
	gotP := relayPromptResult("docs", prompt)
	if gotP.Description != "d" || len(gotP.Messages) != 2 || gotP.Messages[1].Role != "assistant" || gotP.Messages[1].Content != nil {
		t.Fatalf("relayPromptResult = %+v", gotP)
	}
	if link, ok := gotP.Messages[0].Content.(*mcp.ResourceLink); !ok || link.URI != RelayURI("docs", "test://c") || gotP.Messages[0].Role != "user" {
		t.Errorf("relayPromptResult's link = %+v", gotP.Messages[0].Content)
	}
	if link := prompt.Messages[1].Content.(*mcp.ResourceLink); link.URI != "test://c" {
		t.Errorf("relayPromptResult changed the server's link to %q", link.URI)
	}
}
