package model

import "github.com/airlock-mcp/airlock/trust"

// Fixes returns the fix hints of one of the snapshot's hazards: trust.Fixes over
// exactly the inputs every tool was classified from and the text and fingerprint
// Hazards read, under policy p (the config's).
func (s *Snapshot) Fixes(p trust.Policy, h trust.Hazard) []trust.Fix {
	subjects := make([]trust.Subject, len(s.Tools), len(s.Tools)+len(s.Channels))
	for i, t := range s.Tools {
		subjects[i] = trust.Subject{Tool: t.Input(), Text: trust.ToolText(t.Raw), Fingerprint: t.Fingerprint, Fenceable: t.Facts != nil && t.Facts.Fenceable}
	}
	for _, c := range s.Channels {
		subjects = append(subjects, trust.Subject{Tool: c.Input(), Fingerprint: c.Fingerprint, Channel: c.Channel, Fenceable: c.Facts != nil && c.Facts.Fenceable})
	}
	return trust.Fixes(subjects, p, h)
}
