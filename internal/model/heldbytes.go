package model

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HeldBytes estimates the memory the call's arguments and result hold: the bytes of
// every string and blob in them, and a few words for each value around them. Queues
// and lists that keep finished calls bound themselves by it.
func (e CallFinished) HeldBytes() int {
	return len(e.Args) + ResultBytes(e.Result)
}

// ResultBytes estimates the memory a tool result holds (see HeldBytes); 0 for nil.
func ResultBytes(r *mcp.CallToolResult) int {
	if r == nil {
		return 0
	}
	n := valueBytes(map[string]any(r.Meta), 0) + valueBytes(r.StructuredContent, 0)
	for _, c := range r.Content {
		n += contentBytes(c)
	}
	return n
}

// valueOverhead is what an estimate adds for each value besides its own bytes.
const valueOverhead = 16

func contentBytes(c mcp.Content) int {
	n := valueOverhead
	switch c := c.(type) {
	case *mcp.TextContent:
		n += len(c.Text) + valueBytes(map[string]any(c.Meta), 1)
	case *mcp.ImageContent:
		n += len(c.Data) + len(c.MIMEType) + valueBytes(map[string]any(c.Meta), 1)
	case *mcp.AudioContent:
		n += len(c.Data) + len(c.MIMEType) + valueBytes(map[string]any(c.Meta), 1)
	case *mcp.ResourceLink:
		n += len(c.URI) + len(c.Name) + len(c.Title) + len(c.Description) + len(c.MIMEType) + valueBytes(map[string]any(c.Meta), 1)
	case *mcp.EmbeddedResource:
		if r := c.Resource; r != nil {
			n += len(r.URI) + len(r.MIMEType) + len(r.Text) + len(r.Blob) + valueBytes(map[string]any(r.Meta), 1)
		}
		n += valueBytes(map[string]any(c.Meta), 1)
	default:
		// Any other block (sampling's tool use and tool result): its encoding.
		n += marshalledBytes(c)
	}
	return n
}

// maxEstimateDepth stops the walk of values nested deeper than an ordinary result
// is (arguments may not pass 64 levels); what is deeper is counted by its encoding.
const maxEstimateDepth = 80

func valueBytes(v any, depth int) int {
	if depth > maxEstimateDepth {
		return marshalledBytes(v)
	}
	switch v := v.(type) {
	case nil:
		return 0
	case string:
		return valueOverhead + len(v)
	case []byte:
		return valueOverhead + len(v)
	case json.RawMessage:
		return valueOverhead + len(v)
	case bool, float64, int, int64, json.Number:
		return valueOverhead
	case map[string]any:
		n := valueOverhead
		for k, e := range v {
			n += valueOverhead + len(k) + valueBytes(e, depth+1)
		}
		return n
	case []any:
		n := valueOverhead
		for _, e := range v {
			n += valueBytes(e, depth+1)
		}
		return n
	default:
		return marshalledBytes(v)
	}
}

// marshalledBytes is the length of v's JSON encoding: the estimate of a value of a
// type the walk does not know (an in-process server's own struct).
func marshalledBytes(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return valueOverhead
	}
	return valueOverhead + len(b)
}
