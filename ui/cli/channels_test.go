package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A hostile URI, MIME type, text, role and description never reach the terminal raw:
// no ESC, BEL, bidi override or bare newline of the server's comes out; a blob is
// described by its size only.
func TestWriteResourceAndPrompt_EscapeHostileText(t *testing.T) {
	hostile := "\x1b]8;;http://evil\x07click\x1b]8;;\x07\u202e\x1b[2J\r"
	var b bytes.Buffer
	WriteResource(&b, &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: "x://" + hostile, MIMEType: "text/" + hostile, Text: "line1\n" + hostile},
		{URI: "x://blob", Blob: []byte("\x1b[31m\x00binary")},
	}})
	WritePrompt(&b, &mcp.GetPromptResult{Description: hostile, Messages: []*mcp.PromptMessage{
		{Role: mcp.Role("user" + hostile), Content: &mcp.TextContent{Text: hostile}},
	}})
	out := b.String()
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\r", "\x00"} {
		if strings.Contains(out, bad) {
			t.Errorf("output holds %q raw:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, "[binary, 12 bytes]") || !strings.Contains(out, "1 message(s)") {
		t.Errorf("output:\n%s", out)
	}
}
