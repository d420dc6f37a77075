package model

import "github.com/airlock-mcp/airlock/trust"

// Overrides are the person's live "what if" changes for this session: a server's trust,
// a tool's policy, a tool turned off. They recompute tiers, policies and hazards at once
// and are never written into the person's config; ExportOverrides turns them into a
// TOML fragment to merge by hand.
type Overrides struct {
	Trust    map[string]trust.ServerTrust
	Policy   map[trust.Ref]trust.Action
	Disabled map[trust.Ref]bool
	// RulesOff are argument rules turned off for this session, by name (a config
	// key path or a remembered rule's id), with the tool each is for.
	RulesOff map[string]trust.Ref
}

// Empty reports whether there are no live changes.
func (o Overrides) Empty() bool {
	return len(o.Trust) == 0 && len(o.Policy) == 0 && len(o.Disabled) == 0 && len(o.RulesOff) == 0
}
