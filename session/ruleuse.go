package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/airlock-mcp/airlock/session/statefile"
)

// RuleUse is how often an argument rule matched a call and when it last did, as the
// audit log's decision records name it (audit.Record.Rule; every airlock process
// that shares the log).
type RuleUse struct {
	Matched   int
	LastMatch time.Time
}

// RuleUses reads the audit log at path and counts, by rule name (a config key path
// or a remembered rule's id), the decisions whose call a rule matched, for `airlock
// rules list`. A missing log is no matches. The log is read as airlock's own private
// file (no link, the user's own); a record that does not decode ends the count with
// an error (what was counted so far is returned).
func RuleUses(path string) (map[string]RuleUse, error) {
	out := map[string]RuleUse{}
	f, err := statefile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("reading the audit log for rule matches: %w", err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	for {
		var r struct {
			Kind string    `json:"kind"`
			TS   time.Time `json:"ts"`
			Rule string    `json:"rule"`
		}
		if err := dec.Decode(&r); err == io.EOF {
			return out, nil
		} else if err != nil {
			return out, fmt.Errorf("reading the audit log %s for rule matches: %w", path, err)
		}
		if r.Kind != "decision" || r.Rule == "" {
			continue
		}
		u := out[r.Rule]
		u.Matched++
		if r.TS.After(u.LastMatch) {
			u.LastMatch = r.TS
		}
		out[r.Rule] = u
	}
}
