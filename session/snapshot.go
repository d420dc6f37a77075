package session

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/trust"
)

// ServerInfo is a point-in-time view of one server. Text fields that came from the
// server (Instructions, Err, Notices, Implementation) are raw: escape before display.
type ServerInfo struct {
	Name   string
	Trust  trust.ServerTrust
	Labels []trust.Leg
	Status Status
	// Err says why the server failed (nil unless Status is StatusFailed).
	Err error
	// Gen numbers the connection this view comes from.
	Gen                 uint64
	Protocol            string
	Instructions        string
	InstructionsChanged bool
	Implementation      *mcp.Implementation
	// Notices are things a person should know about the listing: caps reached,
	// repeated cursors, removed tools, skipped entries.
	Notices []string
	// Tiers counts the server's tools per tier.
	Tiers [len(trust.Tiers)]int
}

// ToolInfo is a point-in-time view of one tool with its classification. Raw is the
// whole tool object exactly as received; strings in it are server-controlled.
type ToolInfo struct {
	Ref          trust.Ref
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Raw          json.RawMessage
	Declared     trust.Declared
	Class        trust.Classification
	Pin          trust.PinState
	PinnedAt     time.Time
	ServerTrust  trust.ServerTrust
	// Exposed is false when the name cannot be offered through the gateway.
	Exposed bool
}

// Snapshot is the whole session at one moment: servers, classified tools and the
// hazards of the toolset. A Snapshot is immutable; take a new one after an event.
type Snapshot struct {
	// Version increases with every change the Manager sees.
	Version uint64
	Servers []ServerInfo
	// Tools is sorted by server, then tool name.
	Tools   []ToolInfo
	Hazards []trust.Hazard

	index map[trust.Ref]int
}

// Tool finds one tool by server and name.
func (s *Snapshot) Tool(server, name string) (ToolInfo, bool) {
	i, ok := s.index[trust.Ref{Server: server, Tool: name}]
	if !ok {
		return ToolInfo{}, false
	}
	return s.Tools[i], true
}

// Server finds one server by name.
func (s *Snapshot) Server(name string) (ServerInfo, bool) {
	for _, sv := range s.Servers {
		if sv.Name == name {
			return sv, true
		}
	}
	return ServerInfo{}, false
}

// Snapshot returns the current view of the session, cached until something changes.
func (m *Manager) Snapshot() *Snapshot {
	m.mu.Lock()
	if m.snap != nil {
		s := m.snap
		m.mu.Unlock()
		return s
	}
	version := m.version
	m.mu.Unlock()

	snap := m.build(version)

	m.mu.Lock()
	if m.version == version {
		m.snap = snap
	}
	m.mu.Unlock()
	return snap
}

func (m *Manager) build(version uint64) *Snapshot {
	snap := &Snapshot{Version: version, index: map[trust.Ref]int{}}
	var assessed []trust.Assessed
	m.mu.Lock()
	over := m.over
	trusts := make(map[string]trust.ServerTrust, len(m.order))
	for _, name := range m.order {
		trusts[name] = m.trustLocked(m.servers[name])
	}
	policy := make(map[trust.Ref]trust.Action, len(over.Policy))
	for k, v := range over.Policy {
		policy[k] = v
	}
	disabled := make(map[trust.Ref]bool, len(over.Disabled))
	for k, v := range over.Disabled {
		disabled[k] = v
	}
	m.mu.Unlock()
	for _, name := range m.order {
		s := m.servers[name]
		st := trusts[name]
		s.mu.Lock()
		info := ServerInfo{
			Name:                name,
			Trust:               st,
			Labels:              s.cfg.Labels,
			Status:              s.status,
			Err:                 s.err,
			Gen:                 s.gen,
			Protocol:            s.protocol,
			Instructions:        s.instructions,
			InstructionsChanged: s.pins.instructionsChanged,
			Implementation:      s.impl,
			Notices:             s.notices,
		}
		tools, pins := s.tools, s.pins
		s.mu.Unlock()
		if info.Status != StatusReady {
			tools = nil
		}
		for _, lt := range tools {
			tc := s.cfg.Tools[lt.wire.Name]
			t := trust.Tool{
				Server:              name,
				Name:                lt.wire.Name,
				Description:         lt.wire.Description,
				Declared:            lt.declared,
				ServerTrust:         st,
				ServerLabels:        s.cfg.Labels,
				ToolLabels:          tc.Labels,
				Asserted:            tc.Asserted,
				ToolPolicy:          tc.Policy,
				Pin:                 pins.tools[lt.wire.Name],
				PinnedAt:            pins.pinnedAt[lt.wire.Name],
				InstructionsChanged: pins.instructionsChanged,
				NameProblem:         lt.nameProblem,
			}
			ref := trust.Ref{Server: name, Tool: lt.wire.Name}
			if a, ok := policy[ref]; ok {
				t.ToolPolicy = a
			}
			t.Disabled = disabled[ref]
			class := trust.Classify(t, m.cfg.Policy)
			info.Tiers[class.Tier]++
			ti := ToolInfo{
				Ref:          ref,
				Title:        lt.wire.Title,
				Description:  lt.wire.Description,
				InputSchema:  lt.wire.InputSchema,
				OutputSchema: lt.wire.OutputSchema,
				Raw:          lt.raw,
				Declared:     lt.declared,
				Class:        class,
				Pin:          t.Pin,
				PinnedAt:     t.PinnedAt,
				ServerTrust:  st,
				Exposed:      lt.nameProblem == "" && trust.ValidToolName(lt.wire.Name),
			}
			if _, dup := snap.index[ref]; !dup {
				snap.index[ref] = len(snap.Tools)
			}
			snap.Tools = append(snap.Tools, ti)
			assessed = append(assessed, trust.Assessed{Ref: ref, Description: lt.wire.Description, Class: class})
		}
		snap.Servers = append(snap.Servers, info)
	}
	sort.SliceStable(snap.Tools, func(i, j int) bool {
		a, b := snap.Tools[i].Ref, snap.Tools[j].Ref
		if a.Server != b.Server {
			return a.Server < b.Server
		}
		return a.Tool < b.Tool
	})
	clear(snap.index)
	for i, t := range snap.Tools {
		if _, dup := snap.index[t.Ref]; !dup {
			snap.index[t.Ref] = i
		}
	}
	snap.Hazards = trust.Hazards(assessed)
	return snap
}
