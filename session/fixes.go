package session

import "github.com/airlock-mcp/airlock/trust"

// Fixes returns the fix hints of one of the snapshot's hazards: trust.Fixes over
// exactly the inputs every tool was classified from, under policy p (the config's).
func (s *Snapshot) Fixes(p trust.Policy, h trust.Hazard) []trust.Fix {
	inputs := make([]trust.Tool, len(s.Tools))
	for i, t := range s.Tools {
		inputs[i] = t.Input
	}
	return trust.Fixes(inputs, p, h)
}
