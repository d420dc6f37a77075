package approval

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/secrets"
)

// A remembered rule is a file the person keeps (rules.toml) and a line of the audit
// log: neither may hold a secret the call carried. The proposal leaves an argument
// that holds one open (the person sees why), and a rule whose conditions hold one is
// refused before anything is written, whoever typed it.

// leftOpenForSecret is the note of a condition the proposal left open.
const leftOpenForSecret = ": left open, so that it is not written into " + RulesFile

// leaveSecretsOpen drops each condition of p whose operand holds a secret of a
// known shape, with a note naming the argument and the shape.
func leaveSecretsOpen(p model.RuleProposal) model.RuleProposal {
	for _, field := range slices.Sorted(maps.Keys(p.When)) {
		found := secretsInWhen(map[string]map[string]any{field: p.When[field]}, nil)
		if len(found) == 0 {
			continue
		}
		delete(p.When, field)
		f := found[0]
		f.Path, f.InKey = field, false
		p.Notes = append(p.Notes, f.Sentence()+leftOpenForSecret)
	}
	return p
}

// secretsInWhen are the secrets the conditions hold: shapes, and the values of
// known. Conditions that cannot be encoded are treated as holding one.
func secretsInWhen(when map[string]map[string]any, known []secrets.Known) []secrets.Finding {
	b, err := json.Marshal(when)
	if err != nil {
		return []secrets.Finding{{Unchecked: true, Shape: "the conditions cannot be encoded"}}
	}
	return secrets.Find(b, known)
}

// refuseSecrets is the refusal of a rule whose conditions hold a secret, naming
// where and what it looks like, never the value (nil when they hold none).
func refuseSecrets(when map[string]map[string]any, known []secrets.Known) error {
	found := secretsInWhen(when, known)
	if len(found) == 0 {
		return nil
	}
	return errors.New("the rule's condition " + found[0].Sentence() + "; airlock does not write secrets into " + RulesFile + ": leave that argument open or match it by prefix")
}
