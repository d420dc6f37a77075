package cli

import (
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/ui/safetext"
)

// WriteResource writes what `airlock read` got: each content's URI and MIME type
// escaped on one line, its text in a gutter, a blob described by size only (never
// written to the terminal).
func WriteResource(w io.Writer, res *mcp.ReadResourceResult) {
	const gutter = "  │ "
	fmt.Fprintf(w, "✓ %d content(s):\n", len(res.Contents))
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		mime := c.MIMEType
		if mime == "" {
			mime = "no mimeType"
		}
		fmt.Fprintf(w, "  [%s, %s]\n", safetext.Inline(c.URI), safetext.Inline(mime))
		switch {
		case c.Blob != nil:
			fmt.Fprintf(w, "  [binary, %d bytes]\n", len(c.Blob))
		default:
			fmt.Fprintln(w, safetext.Block(c.Text, gutter, maxShownBytes))
		}
	}
}

// WritePrompt writes what `airlock prompt` got: the description, then every message
// with its role, each content as a call result's content is written.
func WritePrompt(w io.Writer, res *mcp.GetPromptResult) {
	if res.Description != "" {
		fmt.Fprintf(w, "description: %s\n", safetext.Inline(res.Description))
	}
	fmt.Fprintf(w, "✓ %d message(s):\n", len(res.Messages))
	for i, m := range res.Messages {
		if m == nil {
			continue
		}
		fmt.Fprintf(w, "  message %d, role %s:\n", i+1, safetext.Inline(string(m.Role)))
		if m.Content == nil {
			continue
		}
		writeContents(w, []mcp.Content{m.Content})
	}
}
