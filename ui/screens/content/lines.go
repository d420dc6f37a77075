package content

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// Lines renders one content block by kind.
func Lines(st *theme.Styles, c mcp.Content, width int) []string {
	g := st.Gutter.Render(common.Gutter)
	kind := func(s string) string { return st.Key.Render("[" + s + "]") }
	switch c := c.(type) {
	case *mcp.TextContent:
		return append([]string{kind("text")}, common.BlockLines(st, c.Text, width, common.MaxShownBytes, g)...)
	case *mcp.ImageContent:
		return []string{kind("image") + " " + common.Inline(st, common.OrDash(c.MIMEType), 40) + ", " + common.ByteSize(len(c.Data)) + st.Muted.Render(" (not drawn; s saves it)")}
	case *mcp.AudioContent:
		return []string{kind("audio") + " " + common.Inline(st, common.OrDash(c.MIMEType), 40) + ", " + common.ByteSize(len(c.Data)) + st.Muted.Render(" (not played; s saves it)")}
	case *mcp.ResourceLink:
		out := []string{kind("resource link") + " " + common.Inline(st, c.URI, width-16)}
		if c.Name != "" || c.Title != "" {
			out = append(out, "  name: "+common.Inline(st, c.Name, width/2)+"  "+common.Inline(st, c.Title, width/3))
		}
		if c.MIMEType != "" || c.Size != nil {
			s := "  type: " + common.Inline(st, common.OrDash(c.MIMEType), 40)
			if c.Size != nil {
				s += ", " + common.ByteSize(int(*c.Size))
			}
			out = append(out, s)
		}
		if c.Description != "" {
			out = append(out, common.BlockLines(st, c.Description, width, common.MaxShownBytes, g)...)
		}
		return out
	case *mcp.EmbeddedResource:
		if c.Resource == nil {
			return []string{kind("embedded resource") + st.Muted.Render(" (empty)")}
		}
		r := c.Resource
		out := []string{kind("embedded resource") + " " + common.Inline(st, r.URI, width-20)}
		if r.MIMEType != "" {
			out = append(out, "  type: "+common.Inline(st, r.MIMEType, 40))
		}
		if r.Text != "" {
			out = append(out, common.BlockLines(st, r.Text, width, common.MaxShownBytes, g)...)
		}
		if len(r.Blob) > 0 {
			out = append(out, "  blob: "+common.ByteSize(len(r.Blob))+st.Muted.Render(" (not drawn; s saves it)"))
		}
		return out
	}
	b, err := json.Marshal(c)
	if err != nil {
		return []string{kind("unknown content") + st.Muted.Render(" (cannot be shown)")}
	}
	return append([]string{kind("other content")}, common.BlockLines(st, string(b), width, common.MaxShownBytes, g)...)
}
