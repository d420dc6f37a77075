package approval_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/audit"
)

// Rule matches are counted over the whole log, every segment, not only the newest
// file, and a record the chain does not vouch for counts nothing.
func TestRuleUses_CountsAcrossSegments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	a.SetSegmentBytes(2048)
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := range 40 {
		r := audit.Record{TS: at.Add(time.Duration(i) * time.Second), Kind: "decision", CallID: "c", Server: "fs", Tool: "read_file", Tier: "read", Decision: "allow", DecidedBy: "rule", Rule: "servers.fs.tools.read_file.rules[0]", ArgsSHA256: "00"}
		if err := a.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	if segs, _ := filepath.Glob(path + ".*[0-9]"); len(segs) < 2 {
		t.Fatalf("the test log has %d closed segments, want several", len(segs))
	}
	uses, err := approval.RuleUses(path)
	if err != nil {
		t.Fatal(err)
	}
	got := uses["servers.fs.tools.read_file.rules[0]"]
	if got.Matched != 40 || !got.LastMatch.Equal(at.Add(39*time.Second)) {
		t.Errorf("RuleUses = %+v, want 40 matches, the last at %v", got, at.Add(39*time.Second))
	}
	// A forged line appended by hand is not a record the chain vouches for.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"kind":"decision","rule":"forged"}` + "\n")
	f.Close()
	uses, err = approval.RuleUses(path)
	if err == nil || uses["forged"].Matched != 0 {
		t.Errorf("after a forged line: %+v, %v; want an error and no match for it", uses, err)
	}
}
