package session

import (
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/trust"
)

// Snapshot returns the current view of the session, cached until something changes.
func (m *Manager) Snapshot() *model.Snapshot {
	m.mu.Lock()
	if m.snap != nil {
		s := m.snap
		m.mu.Unlock()
		return s
	}
	m.mu.Unlock()

	// One build at a time (it reuses the last build's state); a caller that waited
	// for another's build usually finds its result cached.
	m.buildMu.Lock()
	defer m.buildMu.Unlock()
	m.mu.Lock()
	if m.snap != nil {
		s := m.snap
		m.mu.Unlock()
		return s
	}
	version := m.version
	m.mu.Unlock()

	snap := m.build(version)
	m.builds.Add(1)

	m.mu.Lock()
	if m.version == version {
		m.snap = snap
	}
	m.mu.Unlock()
	return snap
}

// serverSnap is one server's part of a snapshot, kept between snapshots: a live change
// to another server, or to nothing of this one, reuses it instead of classifying the
// server's tools again.
type serverSnap struct {
	key      serverSnapKey
	tools    []model.ToolInfo  // sorted by tool name
	ptrs     []*model.ToolInfo // &tools[i], what snapshots hold
	assessed []trust.Assessed
	tiers    [len(trust.Tiers)]int
	channels []model.ToolInfo // the server's channels in the hazards (assessed's tail)
}

// builtState is what one build keeps for the next (guarded by Manager.buildMu): the
// toolset as trust.HazardsReusing was given it, with the server part each stretch of
// it was copied from, and the shadowing part of its hazards. A what-if on one server
// copies only that server's stretch and reuses the rest.
type builtState struct {
	assessed  []trust.Assessed
	from      []*serverSnap // from[i]: the part copied into assessed at the i-th stretch
	shadowing *trust.Shadowing
}

// toolset returns the parts' assessed tools, concatenated, in the buffer the last
// build used: only the stretches of parts that changed are copied, unless the layout
// (how many parts, how many tools each) changed. HazardsReusing keeps nothing of its
// input, so overwriting the buffer is safe; buildMu is held. With one server its
// part's own entries are the toolset: nothing is copied (the part is never changed,
// and the buffer is let go).
func (b *builtState) toolset(parts []*serverSnap) []trust.Assessed {
	if len(parts) == 1 {
		b.assessed, b.from = nil, nil
		return parts[0].assessed
	}
	same := len(b.from) == len(parts)
	total := 0
	for i, p := range parts {
		total += len(p.assessed)
		same = same && len(b.from[i].assessed) == len(p.assessed)
	}
	if !same || len(b.assessed) != total {
		b.assessed = make([]trust.Assessed, 0, total)
		for _, p := range parts {
			b.assessed = append(b.assessed, p.assessed...)
		}
		b.from = slices.Clone(parts)
		return b.assessed
	}
	off := 0
	for i, p := range parts {
		if b.from[i] != p {
			copy(b.assessed[off:], p.assessed)
			b.from[i] = p
		}
		off += len(p.assessed)
	}
	return b.assessed
}

type serverSnapKey struct {
	listing uint64 // server.listing: bumped with every stored tool list or pin outcome
	catalog uint64 // server.catalogVer: only the channels depend on it
	status  model.Status
	trust   trust.ServerTrust
	over    uint64 // Manager.overVersion[server]: bumped with every live change to it
	info    uint64 // server.infoVer: bumped when its roots or deprecated features change
}

func (m *Manager) build(version uint64) *model.Snapshot {
	m.mu.Lock()
	trusts := make(map[string]trust.ServerTrust, len(m.order))
	overVersions := make(map[string]uint64, len(m.order))
	for _, name := range m.order {
		trusts[name] = m.trustLocked(m.servers[name])
		overVersions[name] = m.overVersion[name]
	}
	m.mu.Unlock()

	parts := make([]*serverSnap, len(m.order))
	snap := &model.Snapshot{Version: version, Servers: make([]model.ServerInfo, 0, len(m.order))}
	snap.SetNameBudget(m.nameBudget())
	total := 0
	for i, name := range m.order {
		s := m.servers[name]
		s.mu.Lock()
		info := model.ServerInfo{
			Name:                name,
			Trust:               trusts[name],
			Labels:              s.cfg.Labels,
			Status:              s.status,
			Err:                 s.err,
			Gen:                 s.gen,
			Protocol:            s.protocol,
			Instructions:        s.instructions,
			InstructionsChanged: s.pins.InstructionsChanged,
			Implementation:      s.impl,
			Capabilities:        s.caps,
			Notices:             catalogNotices(s.notices, s.catalog),
			RuleErrors:          s.ruleErrors,
			Env:                 s.envNames,
			Fence:               s.fence,
			Roots:               s.roots,
			Deprecated:          s.deprecated,
		}
		info.TrustSource, info.Blocked = policyTrustSource(s, trusts[name])
		if s.status == model.StatusReady {
			c := s.catalog
			info.Resources, info.ResourceTemplates, info.Prompts = c.resources, c.templates, c.prompts
			info.OffersResources, info.OffersPrompts, info.Subscribe, info.Completions = c.offersResources, c.offersPrompts, c.subscribe, c.completions
		}
		key := serverSnapKey{listing: s.listing, catalog: s.catalogVer, status: s.status, trust: trusts[name], over: overVersions[name], info: s.infoVer}
		part := s.snapCache
		switch {
		case part != nil && part.key == key:
		case part != nil && key.status == model.StatusReady && part.key.toolsKey() == key.toolsKey():
			part = m.rebuildChannels(s, part, key)
			s.snapCache = part
		default:
			part = m.buildServer(s, key)
			s.snapCache = part
		}
		s.mu.Unlock()
		info.Tiers = part.tiers
		parts[i] = part
		total += len(part.tools)
		snap.Servers = append(snap.Servers, info)
	}
	// Servers come in name order and each part is sorted by tool name, so the
	// concatenation is sorted by server, then tool.
	snap.Tools = make([]*model.ToolInfo, 0, total)
	for _, part := range parts {
		snap.Tools = append(snap.Tools, part.ptrs...)
		snap.Channels = append(snap.Channels, part.channels...)
	}
	assessed := m.built.toolset(parts)
	// A live change that moves only Actions and legs (trust, policy) leaves every
	// description and listing as it was: HazardsReusing then takes the shadowing
	// part from the last snapshot instead of reading 10,000 descriptions again. It
	// checks that itself, tool by tool.
	snap.Hazards, m.built.shadowing = trust.HazardsReusing(assessed, m.built.shadowing)
	return snap
}

// parallelBuildMin is the number of tools per processor below which a server's
// tools are classified on one goroutine.
const parallelBuildMin = 1024

// toolsKey is the key without the catalog: what the classified tools depend on.
func (k serverSnapKey) toolsKey() serverSnapKey {
	k.catalog = 0
	return k
}

// rebuildChannels is buildServer after a change to the server's resources or prompts
// only: the tools classified for part are kept (shared, as snapshots share them), the
// channels are made again; s.mu is held.
func (m *Manager) rebuildChannels(s *server, part *serverSnap, key serverSnapKey) *serverSnap {
	n := len(part.tools)
	np := &serverSnap{key: key, tools: part.tools, ptrs: part.ptrs, tiers: part.tiers, channels: m.channels(s, key.trust)}
	// Appending copies (the slice is clipped): part stays as it was.
	np.assessed = appendChannels(slices.Clip(part.assessed[:n]), np.channels, key.trust)
	return np
}

// appendChannels adds a server's resource and prompt channels to its assessed tools:
// they are reachable like tools and fill legs too.
func appendChannels(assessed []trust.Assessed, channels []model.ToolInfo, t trust.ServerTrust) []trust.Assessed {
	for _, c := range channels {
		assessed = append(assessed, trust.Assessed{Ref: c.Ref, Class: c.Class, Fingerprint: c.Fingerprint, Untrusted: t != trust.Trusted})
	}
	return assessed
}

// buildServer classifies one server's tools; s.mu is held.
func (m *Manager) buildServer(s *server, key serverSnapKey) *serverSnap {
	part := &serverSnap{key: key}
	if key.status != model.StatusReady {
		return part
	}
	name := s.cfg.Name
	m.mu.Lock()
	policy := map[string]trust.Action{}
	disabled := map[string]bool{}
	for ref, a := range m.over.Policy {
		if ref.Server == name {
			policy[ref.Tool] = a
		}
	}
	for ref, off := range m.over.Disabled {
		if ref.Server == name {
			disabled[ref.Tool] = off
		}
	}
	m.mu.Unlock()
	tools, pins := s.tools, s.pins
	saved := m.savedRules()
	facts := &model.ServerFacts{Env: s.envNames, Roots: s.roots, Deprecated: s.deprecated, Labels: s.cfg.Labels, Local: s.local(), Fence: s.fence, Fenceable: s.fenceable()}
	part.tools = make([]model.ToolInfo, len(tools))
	part.assessed = make([]trust.Assessed, len(tools))
	// Each tool is classified on its own: a long listing is split over the
	// processors (the first snapshot of 10,000 tools is most of the first screen).
	classify := func(lo, hi int, tiers *[len(trust.Tiers)]int) {
		for i := lo; i < hi; i++ {
			lt := &tools[i]
			tc := s.cfg.Tools[lt.wire.Name]
			pin, _ := pins.Tool(lt.wire.Name)
			t := trust.Tool{
				Server:              name,
				Name:                lt.wire.Name,
				Description:         lt.wire.Description,
				Declared:            lt.declared,
				ServerTrust:         key.trust,
				ServerLabels:        s.cfg.Labels,
				ToolLabels:          tc.Labels,
				Asserted:            tc.Asserted,
				ToolPolicy:          tc.Policy,
				Pin:                 pin.State,
				PinnedAt:            pin.PinnedAt,
				InstructionsChanged: pins.InstructionsChanged,
				NameProblem:         lt.nameProblem,
				Disabled:            disabled[lt.wire.Name],
				Fence:               s.fence,
			}
			if a, ok := policy[lt.wire.Name]; ok {
				t.ToolPolicy = a
			}
			class := trust.Classify(t, m.cfg.Policy)
			hold := m.holdTool(tc, &class)
			tiers[class.Tier]++
			ref := trust.Ref{Server: name, Tool: lt.wire.Name}
			part.tools[i] = model.ToolInfo{
				Ref:                 ref,
				Title:               lt.wire.Title,
				Description:         lt.wire.Description,
				InputSchema:         lt.wire.InputSchema,
				OutputSchema:        lt.wire.OutputSchema,
				Raw:                 lt.raw,
				Fingerprint:         lt.fingerprint,
				Declared:            lt.declared,
				Class:               class,
				Pin:                 t.Pin,
				PinnedAt:            t.PinnedAt,
				ServerTrust:         key.trust,
				Facts:               facts,
				Exposed:             lt.nameProblem == "" && trust.ValidToolName(lt.wire.Name),
				Disabled:            t.Disabled,
				Policy:              t.ToolPolicy,
				TaskSupport:         lt.wire.TaskSupport,
				ToolLabels:          t.ToolLabels,
				Asserted:            t.Asserted,
				InstructionsChanged: t.InstructionsChanged,
				NameProblem:         t.NameProblem,
				Rules:               tc.Rules,
				RuleSet:             configRuleSet(s, lt.wire.Name, tc.Rules),
				Managed:             hold,
			}
			if len(tc.Rules) > 0 {
				part.tools[i].RuleSchema, part.tools[i].BrokenRules = approval.CheckRules(tc.Rules, lt.wire.InputSchema)
			}
			allow := ""
			if !hold.Holds() { // a held tool's calls never run on an allow rule
				allow = m.allowRule(ref, tc.Rules, saved)
			}
			part.assessed[i] = trust.Assessed{Ref: ref, Description: lt.wire.Description, Text: lt.text, Fingerprint: lt.fingerprint, Class: class,
				AllowRule: allow, Untrusted: key.trust != trust.Trusted}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(tools)/parallelBuildMin)
	if workers <= 1 {
		classify(0, len(tools), &part.tiers)
	} else {
		tiers := make([][len(trust.Tiers)]int, workers)
		per := (len(tools) + workers - 1) / workers
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() { classify(w*per, min((w+1)*per, len(tools)), &tiers[w]) })
		}
		wg.Wait()
		for _, t := range tiers {
			for i, n := range t {
				part.tiers[i] += n
			}
		}
	}
	sort.SliceStable(part.tools, func(i, j int) bool { return part.tools[i].Ref.Tool < part.tools[j].Ref.Tool })
	part.ptrs = make([]*model.ToolInfo, len(part.tools))
	for i := range part.tools {
		part.ptrs[i] = &part.tools[i]
	}
	// Resources and prompts are reachable like tools (by the person, and by agents
	// through the gateway): their channels fill legs too.
	part.channels = m.channels(s, key.trust)
	part.assessed = appendChannels(part.assessed, part.channels, key.trust)
	return part
}
