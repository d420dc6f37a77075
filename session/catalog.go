package session

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/airlock-mcp/airlock/session/conn"
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

// catalog is what a server offers besides tools, as last listed.
type catalog struct {
	resources []ResourceInfo
	templates []ResourceTemplateInfo
	prompts   []PromptInfo
	notices   []string
	// offers* say the server declared the capability (even with an empty list).
	offersResources, offersPrompts, subscribe, completions bool
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
			return out, notices, fmt.Errorf("%s: %w", what, conn.RedactURLs(err))
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

// listCatalog lists a server's resources, resource templates and prompts, each only
// when the server declared the capability. The three walks run at once, each within
// its own time limit per, so that a server that never answers one of them costs one
// limit and loses only that list. A listing that fails is a notice, not a failed
// connection: the tools still work.
func listCatalog(ctx context.Context, cs *mcp.ClientSession, per time.Duration) catalog {
	c := declared(cs.InitializeResult())
	if !c.offersResources && !c.offersPrompts {
		return c
	}
	caps := cs.InitializeResult().Capabilities
	var (
		wg                     sync.WaitGroup
		rNotes, tNotes, pNotes []string
	)
	note := func(dst *[]string, ns []string, err error) {
		*dst = append(*dst, ns...)
		if err != nil {
			*dst = append(*dst, err.Error())
		}
	}
	run := func(f func(ctx context.Context)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, per)
			defer cancel()
			f(ctx)
		}()
	}
	if caps.Resources != nil {
		run(func(ctx context.Context) {
			rs, ns, err := walk(ctx, "resources/list", func(ctx context.Context, cursor string) ([]ResourceInfo, string, error) {
				res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				out := make([]ResourceInfo, 0, len(res.Resources))
				for _, r := range res.Resources {
					if r != nil {
						out = append(out, ResourceInfo{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType, Size: r.Size})
					}
				}
				return out, res.NextCursor, nil
			})
			note(&rNotes, ns, err)
			rs, ns = dedupe(rs, "resources/list", func(r ResourceInfo) string { return r.URI })
			note(&rNotes, ns, nil)
			c.resources = rs
		})
		run(func(ctx context.Context) {
			ts, ns, err := walk(ctx, "resources/templates/list", func(ctx context.Context, cursor string) ([]ResourceTemplateInfo, string, error) {
				res, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				out := make([]ResourceTemplateInfo, 0, len(res.ResourceTemplates))
				for _, r := range res.ResourceTemplates {
					if r != nil {
						out = append(out, ResourceTemplateInfo{URITemplate: r.URITemplate, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
					}
				}
				return out, res.NextCursor, nil
			})
			note(&tNotes, ns, err)
			ts, ns = dedupe(ts, "resources/templates/list", func(r ResourceTemplateInfo) string { return r.URITemplate })
			note(&tNotes, ns, nil)
			c.templates = ts
		})
	}
	if caps.Prompts != nil {
		run(func(ctx context.Context) {
			ps, ns, err := walk(ctx, "prompts/list", func(ctx context.Context, cursor string) ([]PromptInfo, string, error) {
				res, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				out := make([]PromptInfo, 0, len(res.Prompts))
				for _, p := range res.Prompts {
					if p == nil {
						continue
					}
					pi := PromptInfo{Name: p.Name, Title: p.Title, Description: p.Description}
					for _, a := range p.Arguments {
						if a != nil {
							pi.Arguments = append(pi.Arguments, PromptArgInfo{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
						}
					}
					out = append(out, pi)
				}
				return out, res.NextCursor, nil
			})
			note(&pNotes, ns, err)
			ps, ns = dedupe(ps, "prompts/list", func(p PromptInfo) string { return p.Name })
			note(&pNotes, ns, nil)
			c.prompts = ps
		})
	}
	wg.Wait()
	c.notices = slices.Concat(rNotes, tNotes, pNotes)
	return c
}

// declared is the catalog of what a server declared in initialize, before anything
// is listed: a read or a get is possible as soon as the server is ready.
func declared(init *mcp.InitializeResult) catalog {
	var c catalog
	if init == nil || init.Capabilities == nil {
		return c
	}
	caps := init.Capabilities
	c.completions = caps.Completions != nil
	if caps.Resources != nil {
		c.offersResources, c.subscribe = true, caps.Resources.Subscribe
	}
	c.offersPrompts = caps.Prompts != nil
	return c
}

// setCatalog stores a new catalog under the publish lock, like setTools, so that a
// channel's last check before forwarding sees it or comes before it, and reports the
// server changed. A catalog of a replaced connection is dropped, and one equal to
// the catalog held changes nothing (a server without resources or prompts lists the
// catalog its capabilities declared: its snapshot, built for its tools, stays).
func (s *server) setCatalog(gen uint64, c catalog) {
	s.m.publish.Lock()
	s.mu.Lock()
	if s.gen != gen || reflect.DeepEqual(s.catalog, c) {
		s.mu.Unlock()
		s.m.publish.Unlock()
		return
	}
	s.catalog = c
	s.catalogVer++
	st := s.status
	s.mu.Unlock()
	s.m.dropSnapshot()
	s.m.publish.Unlock()
	s.m.announce(s.cfg.Name, gen, st)
}

// refreshCatalog lists the catalog again after resources or prompts list_changed,
// coalesced like refresh: one walk in flight, plus one trailing.
func (s *server) refreshCatalog(gen uint64) {
	s.mu.Lock()
	if s.gen != gen || s.cs == nil {
		s.mu.Unlock()
		return
	}
	if s.catRefreshing {
		s.catTrailing = true
		s.mu.Unlock()
		return
	}
	s.catRefreshing = true
	cs := s.cs
	s.mu.Unlock()

	s.m.wg.Add(1)
	go func() {
		defer s.m.wg.Done()
		for {
			ctx, cancel := context.WithTimeout(s.m.ctx, s.callTimeout())
			c := listCatalog(ctx, cs, s.callTimeout())
			cancel()
			s.setCatalog(gen, c)
			s.mu.Lock()
			if !s.catTrailing || s.gen != gen {
				s.catRefreshing, s.catTrailing = false, false
				s.mu.Unlock()
				return
			}
			s.catTrailing = false
			s.mu.Unlock()
		}
	}()
}

// catalogNotices returns the notices of the tool listing followed by the catalog's.
func catalogNotices(tools []string, c catalog) []string {
	if len(c.notices) == 0 {
		return tools
	}
	return slices.Concat(tools, c.notices)
}
