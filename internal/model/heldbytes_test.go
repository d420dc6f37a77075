package model

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The estimate counts every string and blob of a result, whatever holds it, so a
// bound kept by it cannot be passed by putting the bytes somewhere it does not look.
func TestResultBytes_CountsEveryPlaceBytesCanBe(t *testing.T) {
	const n = 1 << 16
	big := strings.Repeat("x", n)
	var structured any
	if err := json.Unmarshal([]byte(`{"a":[{"b":"`+big+`"}]}`), &structured); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*mcp.CallToolResult{
		"text":       {Content: []mcp.Content{&mcp.TextContent{Text: big}}},
		"image":      {Content: []mcp.Content{&mcp.ImageContent{Data: []byte(big), MIMEType: "image/png"}}},
		"audio":      {Content: []mcp.Content{&mcp.AudioContent{Data: []byte(big), MIMEType: "audio/wav"}}},
		"resource":   {Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a", Blob: []byte(big)}}}},
		"link":       {Content: []mcp.Content{&mcp.ResourceLink{URI: "file:///a", Description: big}}},
		"structured": {StructuredContent: structured},
		"meta":       {Meta: mcp.Meta{"k": big}},
		"text meta":  {Content: []mcp.Content{&mcp.TextContent{Text: "t", Meta: mcp.Meta{"k": []any{big}}}}},
		"own struct": {StructuredContent: struct{ B string }{big}},
	} {
		if got := ResultBytes(r); got < n {
			t.Errorf("%s: estimated %d bytes, want at least %d", name, got, n)
		}
	}
	if got := (CallFinished{Args: json.RawMessage(big)}).HeldBytes(); got < n {
		t.Errorf("arguments: estimated %d bytes, want at least %d", got, n)
	}
	if ResultBytes(nil) != 0 {
		t.Error("a nil result holds bytes")
	}
}
