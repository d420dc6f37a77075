package trust

import (
	"slices"
	"strings"
)

// ChangeKind names one config change a fix hint proposes.
type ChangeKind string

// The changes Fixes tries, in the order they are offered (least disruptive first).
const (
	ChangeDenyTool        ChangeKind = "deny-tool"         // [servers.S.tools.T] policy = "deny"
	ChangeDropToolLabel   ChangeKind = "drop-tool-label"   // [servers.S.tools.T] labels without Label
	ChangeDropServerLabel ChangeKind = "drop-server-label" // [servers.S] labels without Label
	ChangeFenceServer     ChangeKind = "fence-server"      // [servers.S.sandbox] network = "none"
	ChangeUntrustServer   ChangeKind = "untrust-server"    // [servers.S] trust = "untrusted"
	ChangeBlockServer     ChangeKind = "block-server"      // [servers.S] trust = "blocked"
	ChangeAskTool         ChangeKind = "ask-tool"          // [servers.S.tools.T] policy = "ask"
	// ChangeDenyChannel and ChangeAskChannel set a server's resources or prompts key
	// (Tool is the channel's synthetic name, ResourceReadTool or PromptGetTool).
	ChangeDenyChannel ChangeKind = "deny-channel" // [servers.S] resources = "deny"
	ChangeAskChannel  ChangeKind = "ask-channel"  // [servers.S] resources = "ask"
)

// Change is one edit of the config. Labels is what the label list holds after a
// drop (so the TOML line can be written whole).
type Change struct {
	Kind   ChangeKind `json:"kind"`
	Server string     `json:"server"`
	Tool   string     `json:"tool,omitempty"`
	Label  Leg        `json:"label,omitempty"`
	Labels []Leg      `json:"labels,omitempty"`
}

// The effects of a Fix.
const (
	// FixBreaks: after the changes the hazard is gone.
	FixBreaks = "breaks"
	// FixGuards: the hazard stays, but a person is asked for at least one leg.
	FixGuards = "guards"
)

// Fix is a set of changes that, applied together, break or guard one hazard without
// adding or unguarding any other.
type Fix struct {
	Effect  string   `json:"effect"`
	Changes []Change `json:"changes"`
}

// Subject is one tool of the toolset Fixes classifies again: what Classify is given,
// and what Hazards reads beside the classification (see Assessed).
type Subject struct {
	Tool        Tool
	Text        string
	Fingerprint string
	// Channel is set for a server's resources or prompts channel (Tool.Name is then
	// its synthetic name, Tool.ToolPolicy its policy key): it is classified by
	// ClassifyChannel, counts in the hazards, and only server-wide changes (labels,
	// trust) are proposed for it, never a change of a tool.
	Channel ChannelKind
	// Fenceable says a sandbox can be applied to the tool's server (a stdio server
	// on a system airlock fences): only then is a fence with network = "none"
	// proposed.
	Fenceable bool
}

// MaxFixes bounds the fixes offered for one hazard.
const MaxFixes = 8

// HazardKey identifies a hazard across recomputations: its kind, and for shadowing
// the tool whose description names others (there is one aggregate hazard of each
// other kind per toolset).
func HazardKey(h Hazard) string {
	if h.Kind == HazardShadowing && len(h.Legs[HazardLegShadowing]) > 0 {
		return string(h.Kind) + " " + h.Legs[HazardLegShadowing][0]
	}
	return string(h.Kind)
}

// Fixes returns the smallest config changes that break hazard h of the toolset
// tools (classified under policy p), each verified by applying it and computing
// Classify and Hazards again: denying one tool, dropping one label, fencing one
// server with network = "none" (a Fenceable one), untrusting or blocking one server. When nothing short of blocking a server breaks it, denying every tool of its
// smallest leg is offered too. For an unguarded hazard, setting policy "ask" on the
// auto-allowed tools of its smallest leg is offered as a guard. A change that would
// add a hazard, or unguard one, is never offered. The result is ordered: single
// changes in ChangeKind order, then the multi-tool denial, then the guard; at most
// MaxFixes. Pure: tools is not modified.
func Fixes(subjects []Subject, p Policy, h Hazard) []Fix {
	tools := make([]Tool, len(subjects))
	for i, sub := range subjects {
		tools[i] = sub.Tool
	}
	ev := func(ts []Tool) map[string]Hazard { return hazardMap(evaluate(ts, subjects, p)) }
	key := HazardKey(h)
	before := ev(tools)
	if _, ok := before[key]; !ok {
		return nil
	}
	involved := map[string]bool{}
	for _, names := range h.Legs {
		for _, n := range names {
			involved[n] = true
		}
	}
	idx := map[string]int{}
	for i := range tools {
		q := Ref{Server: tools[i].Server, Tool: tools[i].Name}.Qualified()
		if involved[q] {
			if _, dup := idx[q]; !dup {
				idx[q] = i
			}
		}
	}

	var cands []Change
	seen := map[string]bool{}
	add := func(c Change) {
		k := string(c.Kind) + "\x00" + c.Server + "\x00" + c.Tool + "\x00" + string(c.Label)
		if !seen[k] {
			seen[k] = true
			cands = append(cands, c)
		}
	}
	legKeys := sortedKeys(h.Legs)
	// For shadowing, denying the tool whose description names others comes first.
	slices.SortStableFunc(legKeys, func(a, b string) int {
		return boolInt(b == HazardLegShadowing) - boolInt(a == HazardLegShadowing)
	})
	isChannel := func(i int) bool { return subjects[i].Channel != "" }
	for _, lk := range legKeys {
		names := h.Legs[lk]
		if len(names) == 1 || lk == HazardLegShadowing {
			if i, ok := idx[names[0]]; ok && !isChannel(i) {
				add(Change{Kind: ChangeDenyTool, Server: tools[i].Server, Tool: tools[i].Name})
			}
		}
	}
	// A channel's deny takes away one kind of a server's text, like denying a tool.
	for _, lk := range legKeys {
		for _, n := range h.Legs[lk] {
			if i, ok := idx[n]; ok && isChannel(i) && tools[i].ToolPolicy != Deny {
				add(Change{Kind: ChangeDenyChannel, Server: tools[i].Server, Tool: tools[i].Name})
			}
		}
	}
	for _, lk := range legKeys {
		leg, isLeg := ParseLeg(lk)
		if !isLeg || leg == LegPersistent {
			// Dropping persistent would not make the store forget: it would only
			// stop asking before writes to it. Never a fix.
			continue
		}
		for _, n := range h.Legs[lk] {
			i, ok := idx[n]
			if !ok {
				continue
			}
			t := tools[i]
			if slices.Contains(t.ToolLabels, leg) && !isChannel(i) {
				add(Change{Kind: ChangeDropToolLabel, Server: t.Server, Tool: t.Name, Label: leg, Labels: without(t.ToolLabels, leg)})
			}
			if slices.Contains(t.ServerLabels, leg) {
				add(Change{Kind: ChangeDropServerLabel, Server: t.Server, Label: leg, Labels: without(t.ServerLabels, leg)})
			}
		}
	}
	var servers []string
	for _, i := range idx {
		if !slices.Contains(servers, tools[i].Server) {
			servers = append(servers, tools[i].Server)
		}
	}
	slices.Sort(servers)
	// A fence with no network, for a server that can be fenced and whose fence is
	// not already that (one asked for and not applied would not apply either).
	for _, s := range servers {
		for i, t := range tools {
			if t.Server == s && subjects[i].Fenceable && !t.Fence.NoNetwork() && !(t.Fence.Requested && !t.Fence.Applied) {
				add(Change{Kind: ChangeFenceServer, Server: s})
				break
			}
		}
	}
	for _, s := range servers {
		for _, t := range tools {
			if t.Server == s && t.ServerTrust == Trusted {
				add(Change{Kind: ChangeUntrustServer, Server: s})
				break
			}
		}
	}
	for _, s := range servers {
		add(Change{Kind: ChangeBlockServer, Server: s})
	}
	slices.SortStableFunc(cands, func(a, b Change) int { return kindOrder(a.Kind) - kindOrder(b.Kind) })

	var out []Fix
	for _, c := range cands {
		if len(out) == MaxFixes {
			return out
		}
		if breaks(ev, tools, key, before, []Change{c}) {
			out = append(out, Fix{Effect: FixBreaks, Changes: []Change{c}})
		}
	}
	if !slices.ContainsFunc(out, func(f Fix) bool { return f.Changes[0].Kind != ChangeBlockServer }) && len(out) < MaxFixes {
		// No single change short of blocking a whole server: deny every tool of the
		// smallest leg.
		var best []Change
		for _, lk := range legKeys {
			var cs []Change
			channel := false
			for _, n := range h.Legs[lk] {
				if i, ok := idx[n]; ok {
					if isChannel(i) {
						channel = true // a channel is no tool to deny: this leg cannot be emptied so
						break
					}
					cs = append(cs, Change{Kind: ChangeDenyTool, Server: tools[i].Server, Tool: tools[i].Name})
				}
			}
			if !channel && len(cs) > 0 && (best == nil || len(cs) < len(best)) {
				best = cs
			}
		}
		if best != nil && breaks(ev, tools, key, before, best) {
			out = append(out, Fix{Effect: FixBreaks, Changes: best})
		}
	}
	if h.Unguarded {
		if g := guard(ev, tools, subjects, p, h, idx, key, before); g != nil {
			// Asking takes nothing away: it comes before untrusting or blocking a
			// whole server.
			at := slices.IndexFunc(out, func(f Fix) bool {
				k := f.Changes[0].Kind
				return len(f.Changes) == 1 && (k == ChangeUntrustServer || k == ChangeBlockServer)
			})
			if at < 0 {
				at = len(out)
			}
			out = slices.Insert(out, at, *g)
			if len(out) > MaxFixes {
				out = out[:MaxFixes]
			}
		}
	}
	return out
}

// guard proposes policy "ask" for the auto-allowed tools of the leg that has the
// fewest of them (for shadowing, every auto-allowed shadowed tool); an auto-allowed
// channel is asked for by its server's resources or prompts key.
func guard(ev func([]Tool) map[string]Hazard, tools []Tool, subjects []Subject, p Policy, h Hazard, idx map[string]int, key string, before map[string]Hazard) *Fix {
	classes := map[int]Classification{}
	class := func(i int) Classification {
		c, ok := classes[i]
		if !ok {
			c = Classify(tools[i], p)
			classes[i] = c
		}
		return c
	}
	var best []Change
	for _, lk := range sortedKeys(h.Legs) {
		if h.Kind == HazardShadowing && lk != HazardLegShadowed {
			continue
		}
		var cs []Change
		for _, n := range h.Legs[lk] {
			i, ok := idx[n]
			if !ok {
				continue
			}
			if subjects[i].Channel != "" {
				if classifyChannel(tools[i], subjects[i].Channel, p).Action == Allow {
					cs = append(cs, Change{Kind: ChangeAskChannel, Server: tools[i].Server, Tool: tools[i].Name})
				}
				continue
			}
			if class(i).Action == Allow {
				cs = append(cs, Change{Kind: ChangeAskTool, Server: tools[i].Server, Tool: tools[i].Name})
			}
		}
		if len(cs) > 0 && (best == nil || len(cs) < len(best)) {
			best = cs
		}
	}
	if best == nil {
		return nil
	}
	after := ev(apply(tools, best))
	if h2, still := after[key]; still && h2.Unguarded {
		return nil
	}
	if worse(before, after) {
		return nil
	}
	return &Fix{Effect: FixGuards, Changes: best}
}

// breaks reports whether applying cs removes the hazard key without adding or
// unguarding another.
func breaks(ev func([]Tool) map[string]Hazard, tools []Tool, key string, before map[string]Hazard, cs []Change) bool {
	after := ev(apply(tools, cs))
	if _, still := after[key]; still {
		return false
	}
	return !worse(before, after)
}

// worse reports whether after holds a hazard before did not, or an unguarded one
// that was guarded.
func worse(before, after map[string]Hazard) bool {
	for k, h := range after {
		b, ok := before[k]
		if !ok || (h.Unguarded && !b.Unguarded) {
			return true
		}
	}
	return false
}

// apply returns a copy of tools with the changes made.
func apply(tools []Tool, cs []Change) []Tool {
	out := slices.Clone(tools)
	for i := range out {
		t := &out[i]
		for _, c := range cs {
			if t.Server != c.Server {
				continue
			}
			switch c.Kind {
			case ChangeDenyTool:
				if t.Name == c.Tool {
					t.ToolPolicy = Deny
				}
			case ChangeAskTool, ChangeAskChannel:
				if t.Name == c.Tool {
					t.ToolPolicy = Ask
				}
			case ChangeDenyChannel:
				if t.Name == c.Tool {
					t.ToolPolicy = Deny
				}
			case ChangeDropToolLabel:
				if t.Name == c.Tool {
					t.ToolLabels = without(t.ToolLabels, c.Label)
				}
			case ChangeDropServerLabel:
				t.ServerLabels = without(t.ServerLabels, c.Label)
			case ChangeFenceServer:
				t.Fence = Fence{Requested: true, Applied: true, Network: "none", Read: t.Fence.Read, Write: t.Fence.Write, Detail: t.Fence.Detail}
			case ChangeUntrustServer:
				if t.ServerTrust == Trusted {
					t.ServerTrust = Untrusted
				}
			case ChangeBlockServer:
				t.ServerTrust = BlockedServer
			}
		}
	}
	return out
}

// evaluate classifies tools (subjects[i] after a change) and computes the hazards,
// with each subject's Text and Fingerprint as the session gives them.
func evaluate(tools []Tool, subjects []Subject, p Policy) []Hazard {
	as := make([]Assessed, len(tools))
	for i, t := range tools {
		var class Classification
		if i < len(subjects) && subjects[i].Channel != "" {
			class = classifyChannel(t, subjects[i].Channel, p)
		} else {
			class = Classify(t, p)
		}
		as[i] = Assessed{Ref: Ref{Server: t.Server, Tool: t.Name}, Description: t.Description, Class: class, Untrusted: t.ServerTrust != Trusted}
		if i < len(subjects) {
			as[i].Text, as[i].Fingerprint = subjects[i].Text, subjects[i].Fingerprint
		}
	}
	return Hazards(as)
}

// classifyChannel classifies the channel subject t of kind k (Tool.ToolPolicy is its
// policy key).
func classifyChannel(t Tool, k ChannelKind, p Policy) Classification {
	return ClassifyChannel(ChannelInput{Server: t.Server, Kind: k, ServerTrust: t.ServerTrust, ServerLabels: t.ServerLabels, Policy: t.ToolPolicy, Fence: t.Fence}, p)
}

func hazardMap(hs []Hazard) map[string]Hazard {
	m := make(map[string]Hazard, len(hs))
	for _, h := range hs {
		m[HazardKey(h)] = h
	}
	return m
}

func without(legs []Leg, l Leg) []Leg {
	out := make([]Leg, 0, len(legs))
	for _, x := range legs {
		if x != l {
			out = append(out, x)
		}
	}
	return out
}

func sortedKeys(m map[string][]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, strings.Compare)
	return ks
}

func kindOrder(k ChangeKind) int {
	switch k {
	case ChangeDenyTool, ChangeDenyChannel:
		return 0
	case ChangeDropToolLabel:
		return 1
	case ChangeDropServerLabel:
		return 2
	case ChangeFenceServer:
		return 3
	case ChangeUntrustServer:
		return 4
	case ChangeBlockServer:
		return 5
	}
	return 6
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
