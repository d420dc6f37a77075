package model

import (
	"slices"
	"strings"
	"sync"

	"github.com/airlock-mcp/airlock/trust"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerInfo is a point-in-time view of one server. Text fields that came from the
// server (Instructions, Err, Notices, Implementation) are raw: escape before display.
type ServerInfo struct {
	Name  string
	Trust trust.ServerTrust
	// TrustSource is "policy: FILE:LINE" when the managed policy set Trust ("":
	// the person's config or live change); Blocked says why the policy blocks
	// the server ("" when it does not).
	TrustSource string
	Blocked     string
	Labels      []trust.Leg
	Status      Status
	// Err says why the server failed (nil unless Status is StatusFailed).
	Err error
	// Gen numbers the connection this view comes from.
	Gen                 uint64
	Protocol            string
	Instructions        string
	InstructionsChanged bool
	Implementation      *mcp.Implementation
	// Capabilities is what the server declared in its initialize result (nil
	// before the first connection).
	Capabilities *mcp.ServerCapabilities
	// Notices are things a person should know about the listing: caps reached,
	// repeated cursors, removed tools, skipped entries.
	Notices []string
	// RuleErrors are the config's rules that can never match the listing, one
	// sentence each naming the rule and its line: a condition on a field the
	// tool's schema does not declare or of a type its matcher cannot compare
	// (that tool asks for every call until the rule is fixed), or rules for a tool
	// the server does not list. `check` fails on any.
	RuleErrors []RuleError
	// Tiers counts the server's tools per tier.
	Tiers [len(trust.Tiers)]int
	// Env names the environment variables a stdio server's process receives (never
	// their values); nil for other transports.
	Env []string
	// Fence is what the server's sandbox enforces, as its launcher reported it
	// (the zero value: no sandbox asked for).
	Fence trust.Fence
	// Resources, ResourceTemplates and Prompts are what the server lists besides
	// tools (catalog.go: paging caps, duplicates dropped), as received: escape
	// before display. OffersResources and OffersPrompts say the server declared
	// the capability; Subscribe that it takes resources/subscribe, Completions
	// that it answers completion/complete.
	Resources         []ResourceInfo
	ResourceTemplates []ResourceTemplateInfo
	Prompts           []PromptInfo
	OffersResources   bool
	OffersPrompts     bool
	Subscribe         bool
	Completions       bool
	// Roots are the file:// URIs airlock answers roots/list with (the config's roots,
	// or the last SetRoots); nil when the server gets no roots.
	Roots []string
	// Deprecated lists the features deprecated by the 2026-07-28 spec (SEP-2577)
	// that the server used in this run, sorted: DeprecatedLogging, DeprecatedRoots,
	// DeprecatedSampling.
	Deprecated []string
}

// Snapshot is the whole session at one moment: servers, classified tools and the
// hazards of the toolset. A Snapshot is immutable; take a new one after an event.
//
// Everything a Snapshot holds is READ-ONLY and shared: the ToolInfo values Tools
// points to are shared with later snapshots (a what-if rebuilds only the changed
// server's), and Hazards' legs with later snapshots' hazards (see trust.Hazard). A
// caller that wants to sort, trim, append to or change any of it copies it first.
type Snapshot struct {
	// Version increases with every change the Manager sees.
	Version uint64
	Servers []ServerInfo
	// Tools is sorted by server, then tool name. The pointers let snapshots share
	// unchanged servers' tools instead of copying 10,000 values per what-if.
	Tools   []*ToolInfo
	Hazards []trust.Hazard
	// Channels are the servers' resources and prompts channels that count in the
	// hazards (not tools: nothing lists or serves them), for Fixes.
	Channels []ToolInfo
	// served is the names the gateway serves the tools and prompts under, made on
	// first use.
	served *servedNames
}

// SetNameBudget makes the snapshot serve names of at most budget bytes ([gateway]
// name_budget; ServedName). Call it while building the snapshot, before it is
// shared; a snapshot without it maps names within trust.DefaultNameBudget.
func (s *Snapshot) SetNameBudget(budget int) { s.served = &servedNames{budget: budget} }

// Tool finds one tool by server and name (the first, if a server lists it twice): a
// binary search of Tools, which is sorted, so that no index is built per snapshot.
func (s *Snapshot) Tool(server, name string) (ToolInfo, bool) {
	i, ok := slices.BinarySearchFunc(s.Tools, trust.Ref{Server: server, Tool: name}, func(t *ToolInfo, r trust.Ref) int {
		if c := strings.Compare(t.Ref.Server, r.Server); c != 0 {
			return c
		}
		return strings.Compare(t.Ref.Tool, r.Tool)
	})
	if !ok {
		return ToolInfo{}, false
	}
	return *s.Tools[i], true
}

// Channel finds a server's resources or prompts channel among Channels.
func (s *Snapshot) Channel(server string, k trust.ChannelKind) (ToolInfo, bool) {
	name := trust.ChannelTool(k)
	for _, c := range s.Channels {
		if c.Ref.Server == server && c.Ref.Tool == name {
			return c, true
		}
	}
	return ToolInfo{}, false
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
