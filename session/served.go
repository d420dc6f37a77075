package session

import (
	"sync"

	"github.com/airlock-mcp/airlock/trust"
)

// servedNames is the names the gateway serves a snapshot's tools and prompts under
// (trust.MapServedNames), made the first time anything asks: most snapshots (a
// what-if, a listing seen only by the TUI) never need them.
type servedNames struct {
	budget int
	once   sync.Once
	tools  *trust.ServedNames
	// prompts are mapped apart from tools: agents name them in prompts/get, never
	// in tools/call.
	prompts *trust.ServedNames
}

// nameBudget is [gateway] name_budget, or the default.
func (m *Manager) nameBudget() int {
	if g := m.cfg.Gateway; g != nil {
		return trust.ServedNameBudget(g.NameBudget)
	}
	return trust.DefaultNameBudget
}

// names is the snapshot's mapping, made once.
func (s *Snapshot) names() *servedNames {
	n := s.served
	if n == nil {
		// A snapshot not built by a Manager (a test's): mapped on every call.
		n = &servedNames{budget: trust.DefaultNameBudget}
	}
	n.once.Do(func() {
		var tools []trust.Ref
		for _, t := range s.Tools {
			if t.Exposed {
				tools = append(tools, t.Ref)
			}
		}
		n.tools = trust.MapServedNames(tools, n.budget)
		var prompts []trust.Ref
		for _, sv := range s.Servers {
			for _, p := range sv.Prompts {
				if trust.ValidToolName(p.Name) {
					prompts = append(prompts, trust.Ref{Server: sv.Name, Tool: p.Name})
				}
			}
		}
		n.prompts = trust.MapServedNames(prompts, n.budget)
	})
	return n
}

// NameBudget is the longest name the gateway serves ([gateway] name_budget).
func (s *Snapshot) NameBudget() int { return s.names().budget }

// ServedName is the name the gateway serves t under: its qualified name SERVER__TOOL
// when that matches ^[A-Za-z0-9_-]{1,64}$ within the name budget, else a name of
// airlock's choosing (trust.MapServedNames). It is false when t is not served by
// any name: its name is not a valid tool name or is listed twice, or every name it
// could take clashed. A blocked tool has a name too (it keeps it, so that blocking
// one tool never renames another), but is not served.
func (s *Snapshot) ServedName(t *ToolInfo) (string, bool) {
	if !t.Exposed {
		return "", false
	}
	return s.names().tools.Name(t.Ref)
}

// ServedPromptName is the name the gateway serves server's prompt name under, as
// ServedName for tools; false when it serves it under none.
func (s *Snapshot) ServedPromptName(server, name string) (string, bool) {
	if !trust.ValidToolName(name) {
		return "", false
	}
	return s.names().prompts.Name(trust.Ref{Server: server, Tool: name})
}

// ToolByServedName finds the tool the gateway serves under name; a qualified name
// that is served under another name (one longer than the budget, or dotted) is not
// found.
func (s *Snapshot) ToolByServedName(name string) (ToolInfo, bool) {
	r, ok := s.names().tools.Lookup(name)
	if !ok {
		return ToolInfo{}, false
	}
	t, ok := s.Tool(r.Server, r.Tool)
	if !ok {
		return ToolInfo{}, false
	}
	if served, ok := s.ServedName(&t); !ok || served != name {
		return ToolInfo{}, false
	}
	return t, true
}
