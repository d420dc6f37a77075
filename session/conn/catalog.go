package conn

import (
	"context"
	"fmt"

	"github.com/airlock-mcp/airlock/internal/model"
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
func ListResources(ctx context.Context, cs *mcp.ClientSession) ([]model.ResourceInfo, []string) {
	return list(ctx, "resources/list", func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
		res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Resources, res.NextCursor, nil
	}, func(r *mcp.Resource) model.ResourceInfo {
		return model.ResourceInfo{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType, Size: r.Size}
	}, func(r model.ResourceInfo) string { return r.URI })
}

// ListResourceTemplates walks resources/templates/list (duplicate templates
// dropped), with its notices.
func ListResourceTemplates(ctx context.Context, cs *mcp.ClientSession) ([]model.ResourceTemplateInfo, []string) {
	return list(ctx, "resources/templates/list", func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
		res, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.ResourceTemplates, res.NextCursor, nil
	}, func(r *mcp.ResourceTemplate) model.ResourceTemplateInfo {
		return model.ResourceTemplateInfo{URITemplate: r.URITemplate, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType}
	}, func(r model.ResourceTemplateInfo) string { return r.URITemplate })
}

// ListPrompts walks prompts/list (duplicate names dropped), with its notices.
func ListPrompts(ctx context.Context, cs *mcp.ClientSession) ([]model.PromptInfo, []string) {
	return list(ctx, "prompts/list", func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
		res, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Prompts, res.NextCursor, nil
	}, func(p *mcp.Prompt) model.PromptInfo {
		pi := model.PromptInfo{Name: p.Name, Title: p.Title, Description: p.Description}
		for _, a := range p.Arguments {
			if a != nil {
				pi.Arguments = append(pi.Arguments, model.PromptArgInfo{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
			}
		}
		return pi
	}, func(p model.PromptInfo) string { return p.Name })
}
