package session

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/conn"
	"github.com/airlock-mcp/airlock/trust"
)

// wireTool is a tool object decoded leniently from the raw bytes: a field of the wrong
// type is left empty rather than failing the whole list.
type wireTool struct {
	Name         string
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Annotations  json.RawMessage
	// TaskSupport is execution.taskSupport ("" when absent or not a string).
	TaskSupport string
}

// readTool reads one raw tool object in one pass (trust.ReadTool): its wire fields,
// the text a model reads of it and its declared hints; ok is false when it is not a
// JSON object.
func readTool(raw json.RawMessage) (w wireTool, f trust.ToolFields, ok bool) {
	f, ok = trust.ReadTool(raw)
	if !ok {
		return wireTool{}, f, false
	}
	return wireTool{
		Name:         f.Name,
		Title:        f.Title,
		Description:  f.Description,
		InputSchema:  f.InputSchema,
		OutputSchema: f.OutputSchema,
		Annotations:  f.Annotations,
		TaskSupport:  f.TaskSupport,
	}, f, true
}

// listedTool is one tool as a server listed it, before classification.
type listedTool struct {
	wire        wireTool
	raw         json.RawMessage
	declared    trust.Declared
	fingerprint string
	text        string // every text field a model reads (trust.ToolText), for shadowing
	nameProblem string
}

// listTools lists the server's tools (conn.ListTools: the pages as the capture kept
// them) and decodes them from those raw bytes.
func listTools(ctx context.Context, cs *mcp.ClientSession, capt *conn.Capture) ([]listedTool, []string, error) {
	raws, notices, err := conn.ListTools(ctx, cs, capt)
	if err != nil {
		return nil, notices, err
	}
	tools, more := parseListing(raws)
	return tools, append(notices, more...), nil
}

// parseListing decodes the raw tool objects of a listing (live, or recorded in a
// snapshot file): fingerprints, declared hints, and the name problems that block a
// tool, with notices for what was skipped or rejected.
func parseListing(raws []json.RawMessage) ([]listedTool, []string) {
	var notices []string
	// Each tool is decoded on its own (wire fields, fingerprint, declared hints,
	// text), so a long listing is split over the processors; the order is kept.
	parsed := make([]listedTool, len(raws))
	ok := make([]bool, len(raws))
	parseRange := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			parsed[i], ok[i] = parseTool(raws[i])
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(raws)/parallelParseMin)
	if workers <= 1 {
		parseRange(0, len(raws))
	} else {
		var wg sync.WaitGroup
		per := (len(raws) + workers - 1) / workers
		for lo := 0; lo < len(raws); lo += per {
			wg.Go(func() { parseRange(lo, min(lo+per, len(raws))) })
		}
		wg.Wait()
	}
	tools := parsed[:0]
	skipped := 0
	for i := range parsed {
		if !ok[i] {
			skipped++
			continue
		}
		tools = append(tools, parsed[i])
	}
	clear(parsed[len(tools):])
	if skipped > 0 {
		notices = append(notices, fmt.Sprintf("%d entries of tools/list were not tool objects and were skipped", skipped))
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.wire.Name
	}
	problems := trust.NameProblems(names)
	var rejected []string
	said := map[string]bool{}
	for i := range tools {
		problem, ok := problems[i]
		if !ok {
			continue
		}
		if tools[i].nameProblem == "" {
			tools[i].nameProblem = problem
		}
		// Each rejected name is said once at server level too (hostile cases 10 and 12:
		// "a warning shown", "reported"), quoted so that spaces and look-alikes show.
		if !said[names[i]] {
			said[names[i]] = true
			rejected = append(rejected, quoteName(names[i]))
		}
	}
	if len(rejected) > 0 {
		notices = append(notices, fmt.Sprintf("tools blocked and not exposed because of their names (invalid or listed twice): %s", shortList(rejected, 5)))
	}
	return tools, notices
}

// parallelParseMin is the number of tools per processor below which a listing is
// parsed on one goroutine.
const parallelParseMin = 512

// parseTool decodes one raw tool object; ok is false when it is not a tool object.
func parseTool(raw json.RawMessage) (t listedTool, ok bool) {
	w, f, ok := readTool(raw)
	if !ok {
		return listedTool{}, false
	}
	fp, err := trust.ToolFingerprint(raw)
	if err != nil {
		// A definition that cannot be fingerprinted cannot be pinned: block it.
		fp = ""
	}
	t = listedTool{
		wire:        w,
		raw:         raw,
		declared:    f.Declared,
		fingerprint: fp,
		text:        f.Text,
	}
	if err != nil {
		t.nameProblem = "definition cannot be fingerprinted: " + err.Error()
	}
	return t, true
}

// quoteName quotes a rejected tool name for a notice, cut after 64 bytes: a notice
// names the problem, the tool's own entry keeps the whole name.
func quoteName(name string) string {
	const keep = 64
	if len(name) <= keep {
		return strconv.Quote(name)
	}
	return fmt.Sprintf("%s… (%d more bytes)", strconv.Quote(name[:keep]), len(name)-keep)
}

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
