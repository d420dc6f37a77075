package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/airlock-mcp/airlock/session/audit"
)

// RuleUse is how often an argument rule matched a call and when it last did, as the
// audit log's decision records name it (audit.Record.Rule; every airlock process
// that shares the log).
type RuleUse struct {
	Matched   int
	LastMatch time.Time
}

// RuleUses counts, by rule name (a config key path or a remembered rule's id), the
// decisions of the audit log at path whose call a rule matched, for `airlock rules
// list`. It reads the log as audit.Walk does: every segment in order, under the
// log's lock, each line bounded, and only records the chain vouches for. No log is
// no matches; a damaged one ends the count with an error (what was counted before
// the damage is returned).
func RuleUses(path string) (map[string]RuleUse, error) {
	out := map[string]RuleUse{}
	_, err := audit.Walk(path, func(kind string, line []byte) error {
		if kind != "decision" {
			return nil
		}
		var r struct {
			TS   time.Time `json:"ts"`
			Rule string    `json:"rule"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		if r.Rule == "" {
			return nil
		}
		u := out[r.Rule]
		u.Matched++
		if r.TS.After(u.LastMatch) {
			u.LastMatch = r.TS
		}
		out[r.Rule] = u
		return nil
	})
	if err != nil && !errors.Is(err, audit.ErrNoLog) {
		return out, fmt.Errorf("reading the audit log %s for rule matches: %w", path, err)
	}
	return out, nil
}
