package cli

import (
	"fmt"
	"strings"

	"github.com/airlock-mcp/airlock/trust"
)

// FailOn is a policy-as-code rule for `airlock check --fail-on SPEC`: check fails when
// a hazard matches any of its terms.
//
// SPEC is a comma-separated list of terms. A term is a hazard kind
// (lethal-trifecta, open-world-exfiltration, untrusted-destructive, shadowing,
// untrusted-server), a severity (critical, high, medium), or "any"; prefixed with "unguarded:" it only matches
// hazards whose every leg runs without asking. The term "drift" matches any
// difference `check --drift` finds from its snapshot. Examples: "lethal-trifecta",
// "unguarded:any", "critical,unguarded:high", "drift,unguarded:any".
type FailOn struct {
	terms []failTerm
	drift bool
}

type failTerm struct {
	unguarded bool
	kind      trust.HazardKind
	severity  trust.Severity
	any       bool
}

var hazardKinds = []trust.HazardKind{trust.HazardLethalTrifecta, trust.HazardOpenWorldExfiltration, trust.HazardUntrustedDestructive, trust.HazardUntrustedPersistence, trust.HazardShadowing, trust.HazardUntrustedServer}

// ParseFailOn reads a --fail-on SPEC, naming the term it does not understand.
func ParseFailOn(spec string) (FailOn, error) {
	var f FailOn
	for _, raw := range strings.Split(spec, ",") {
		term := strings.TrimSpace(raw)
		if term == "" {
			continue
		}
		if term == "drift" {
			f.drift = true
			continue
		}
		var t failTerm
		if rest, ok := strings.CutPrefix(term, "unguarded:"); ok {
			t.unguarded, term = true, rest
		}
		switch {
		case term == "any":
			t.any = true
		case term == string(trust.SeverityCritical) || term == string(trust.SeverityHigh) || term == string(trust.SeverityMedium):
			t.severity = trust.Severity(term)
		default:
			known := false
			for _, k := range hazardKinds {
				if term == string(k) {
					t.kind, known = k, true
				}
			}
			if !known {
				return FailOn{}, fmt.Errorf("--fail-on: unknown term %q (want a hazard kind %v, a severity critical|high|medium, or any, optionally prefixed unguarded:; or drift)", raw, hazardKinds)
			}
		}
		f.terms = append(f.terms, t)
	}
	if len(f.terms) == 0 && !f.drift {
		return FailOn{}, fmt.Errorf("--fail-on: empty rule")
	}
	return f, nil
}

// Match returns the hazards the rule fails on.
func (f FailOn) Match(hs []trust.Hazard) []trust.Hazard {
	var out []trust.Hazard
	for _, h := range hs {
		for _, t := range f.terms {
			if t.unguarded && !h.Unguarded {
				continue
			}
			if t.any || t.kind == h.Kind || t.severity == h.Severity {
				out = append(out, h)
				break
			}
		}
	}
	return out
}

// Drift reports whether the rule fails on drift findings.
func (f FailOn) Drift() bool { return f.drift }
