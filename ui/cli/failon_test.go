package cli

import (
	"testing"

	"github.com/airlock-mcp/airlock/trust"
)

func TestFailOn(t *testing.T) {
	trifecta := trust.Hazard{Kind: trust.HazardLethalTrifecta, Severity: trust.SeverityCritical}
	unguardedShadow := trust.Hazard{Kind: trust.HazardShadowing, Severity: trust.SeverityHigh, Unguarded: true}
	guardedExfil := trust.Hazard{Kind: trust.HazardOpenWorldExfiltration, Severity: trust.SeverityHigh}
	all := []trust.Hazard{trifecta, unguardedShadow, guardedExfil}
	cases := []struct {
		name, spec string
		hazards    []trust.Hazard
		want       int
		err        bool
	}{
		{"kind matches", "lethal-trifecta", all, 1, false},
		{"kind absent", "untrusted-destructive", all, 0, false},
		{"severity", "high", all, 2, false},
		{"unguarded only", "unguarded:any", all, 1, false},
		{"unguarded kind not met", "unguarded:lethal-trifecta", all, 0, false},
		{"list", "critical, unguarded:high", all, 2, false},
		{"nothing to match", "any", nil, 0, false},
		{"unknown term", "trifecta", all, 0, true},
		{"empty", " , ", all, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := ParseFailOn(c.spec)
			if (err != nil) != c.err {
				t.Fatalf("ParseFailOn(%q) err = %v", c.spec, err)
			}
			if err != nil {
				return
			}
			if got := len(f.Match(c.hazards)); got != c.want {
				t.Errorf("%q matched %d hazards, want %d", c.spec, got, c.want)
			}
		})
	}
}
