package session

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session/conn"
)

// catalog is what a server offers besides tools, as last listed.
type catalog struct {
	resources []model.ResourceInfo
	templates []model.ResourceTemplateInfo
	prompts   []model.PromptInfo
	notices   []string
	// offers* say the server declared the capability (even with an empty list).
	offersResources, offersPrompts, subscribe, completions bool
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
			c.resources, rNotes = conn.ListResources(ctx, cs)
		})
		run(func(ctx context.Context) {
			c.templates, tNotes = conn.ListResourceTemplates(ctx, cs)
		})
	}
	if caps.Prompts != nil {
		run(func(ctx context.Context) {
			c.prompts, pNotes = conn.ListPrompts(ctx, cs)
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
