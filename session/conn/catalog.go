package conn

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds on one server's resource, template and prompt listings (each walk of
// resources/list, resources/templates/list and prompts/list); each one reached is
// reported as a server notice, never silent.
const (
	// MaxCatalogPages bounds the pages of one listing walk.
	MaxCatalogPages = 1000
	// MaxCatalogItems bounds the entries kept of one kind for one server.
	MaxCatalogItems = 10000
)

// ResourceInfo is one resource a server lists. Every string is server-controlled
// and kept as sent: escape before display.
type ResourceInfo struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	// Size is what the server says the content weighs (0: not said); it is not
	// checked and bounds nothing.
	Size int64 `json:"size,omitempty"`
}

// ResourceTemplateInfo is one resource template (an RFC 6570 URI template) a server
// lists. Strings are server-controlled: escape before display.
type ResourceTemplateInfo struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// PromptInfo is one prompt a server lists, with its arguments. Strings are
// server-controlled: escape before display.
type PromptInfo struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Arguments   []PromptArgInfo `json:"arguments,omitempty"`
}

// PromptArgInfo is one argument of a prompt.
type PromptArgInfo struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// walk pages through one listing with airlock's own loop: a page cap, an item cap,
// and repeated-cursor detection, each said in a notice. page fetches one page.
func walk[T any](ctx context.Context, what string, page func(ctx context.Context, cursor string) ([]T, string, error)) ([]T, []string, error) {
	var (
		out     []T
		notices []string
		cursor  string
		seen    = map[string]bool{}
	)
	for n := 0; ; n++ {
		if n == MaxCatalogPages {
			notices = append(notices, fmt.Sprintf("%s stopped after %d pages; the rest is not shown", what, MaxCatalogPages))
			break
		}
		items, next, err := page(ctx, cursor)
		if err != nil {
			return out, notices, fmt.Errorf("%s: %w", what, RedactURLs(err))
		}
		out = append(out, items...)
		if len(out) > MaxCatalogItems {
			notices = append(notices, fmt.Sprintf("%s listed more than %d entries; only the first %d are kept", what, MaxCatalogItems, MaxCatalogItems))
			out = out[:MaxCatalogItems:MaxCatalogItems]
			break
		}
		if next == "" {
			break
		}
		if seen[next] {
			notices = append(notices, fmt.Sprintf("%s repeated a cursor after %d pages; stopped there", what, n+1))
			break
		}
		seen[next] = true
		cursor = next
	}
	return out, notices, nil
}

// dedupe keeps the first entry of each key and says how many were dropped.
func dedupe[T any](items []T, what string, key func(T) string) ([]T, []string) {
	seen := make(map[string]bool, len(items))
	out := items[:0:0]
	dropped := 0
	for _, it := range items {
		k := key(it)
		if seen[k] {
			dropped++
			continue
		}
		seen[k] = true
		out = append(out, it)
	}
	if dropped == 0 {
		return items, nil
	}
	return out, []string{fmt.Sprintf("%s listed %d duplicate entries; the first of each is kept", what, dropped)}
}

// withError appends a listing's notices, and its error if any, to dst: a listing that
// fails is said, not a failed connection.
func withError(dst, ns []string, err error) []string {
	dst = append(dst, ns...)
	if err != nil {
		dst = append(dst, err.Error())
	}
	return dst
}

// list walks one listing and drops the entries of a repeated key, with the
// notices of both; fetch gets one page, and each entry that is not null becomes
// airlock's own with conv.
func list[T, R any](ctx context.Context, what string, fetch func(ctx context.Context, cursor string) ([]*R, string, error), conv func(*R) T, key func(T) string) ([]T, []string) {
	items, ns, err := walk(ctx, what, func(ctx context.Context, cursor string) ([]T, string, error) {
		page, next, err := fetch(ctx, cursor)
		if err != nil {
			return nil, "", err
		}
		out := make([]T, 0, len(page))
		for _, r := range page {
			if r != nil {
				out = append(out, conv(r))
			}
		}
		return out, next, nil
	})
	notes := withError(nil, ns, err)
	items, ns = dedupe(items, what, key)
	return items, withError(notes, ns, nil)
}

// ListResources walks resources/list (duplicate URIs dropped), with its notices.
func ListResources(ctx context.Context, cs *mcp.ClientSession) ([]ResourceInfo, []string) {
	return list(ctx, "resources/list", func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
		res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Resources, res.NextCursor, nil
	}, func(r *mcp.Resource) ResourceInfo {
		return ResourceInfo{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType, Size: r.Size}
	}, func(r ResourceInfo) string { return r.URI })
}

// ListResourceTemplates walks resources/templates/list (duplicate templates
// dropped), with its notices.
func ListResourceTemplates(ctx context.Context, cs *mcp.ClientSession) ([]ResourceTemplateInfo, []string) {
	return list(ctx, "resources/templates/list", func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
		res, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.ResourceTemplates, res.NextCursor, nil
	}, func(r *mcp.ResourceTemplate) ResourceTemplateInfo {
		return ResourceTemplateInfo{URITemplate: r.URITemplate, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType}
	}, func(r ResourceTemplateInfo) string { return r.URITemplate })
}

// ListPrompts walks prompts/list (duplicate names dropped), with its notices.
func ListPrompts(ctx context.Context, cs *mcp.ClientSession) ([]PromptInfo, []string) {
	return list(ctx, "prompts/list", func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
		res, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Prompts, res.NextCursor, nil
	}, func(p *mcp.Prompt) PromptInfo {
		pi := PromptInfo{Name: p.Name, Title: p.Title, Description: p.Description}
		for _, a := range p.Arguments {
			if a != nil {
				pi.Arguments = append(pi.Arguments, PromptArgInfo{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
			}
		}
		return pi
	}, func(p PromptInfo) string { return p.Name })
}
