package approval

import (
	"fmt"
	"slices"

	"github.com/airlock-mcp/airlock/trust"
)

// RulesProblem says why rules.toml cannot be read (nil when it can, or it is not
// kept in a file).
func (e *Engine) RulesProblem() error {
	if e.rules == nil || e.rules.path == "" {
		return nil
	}
	return e.rules.problem()
}

// RatesProblem says why rates.json could not be read or written for the last call
// under a rate limit (before any, whether it can be read now); nil when it could, or
// when no rate limit is set or the counts are kept in memory. While it cannot, every
// call under a rate limit asks. Only the first look before any call reads the file.
func (e *Engine) RatesProblem() error {
	b := e.rates
	if b == nil || b.path == "" {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.looked {
		if _, err := b.load(); err != nil {
			b.problem = &rateFileError{"read", err}
		}
		b.looked = true
	}
	if b.problem == nil {
		return nil
	}
	return fmt.Errorf("%s cannot be %s, so every call under a rate limit asks until it can: %s", b.path, rateFileVerb(b.problem), unreadableReason(b.problem))
}

// askUnreadableRules is v for a tool a remembered rule could decide while rules.toml
// cannot be read: what would run unasked asks instead (a grant, the policy or an
// allow rule cannot know what the file says), a question or a denial stays; the
// reason comes first, after a denial's own.
func askUnreadableRules(v trust.Verdict, err error) trust.Verdict {
	why := RulesFile + " cannot be read (" + unreadableReason(err) + "), and a remembered rule may decide this call, so it asks"
	if v.Action == trust.Deny {
		v.Reasons = append(slices.Clone(v.Reasons), why) // the denial's own cause first
		return v
	}
	v.Reasons = slices.Insert(slices.Clone(v.Reasons), 0, why)
	if v.Action == trust.Allow {
		v.Action, v.By = trust.Ask, trust.DecidedByPolicy
	}
	return v
}
