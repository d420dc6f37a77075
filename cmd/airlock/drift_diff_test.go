package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A tool whose definition changed since the snapshot: check --drift prints the
// definition's diff (the snapshot's line with "-", the live one with "+"), as
// the TUI's rug-pull view does, in text, markdown and the SARIF message.
func TestCheckDrift_PrintsTheDefinitionDiff(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "snap.json")
	if r := snapshotExample(t, snap); r.code != 0 {
		t.Fatalf("snapshot: %d %s", r.code, r.stderr)
	}
	b, _ := os.ReadFile(snap)
	changed := strings.Replace(string(b), "Send an email to any address.", "Send an email to your own address only.", 1)
	if changed == string(b) {
		t.Fatal("setup: nothing replaced")
	}
	if err := os.WriteFile(snap, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	was := `-   "description": "Send an email to your own address only. Returns the id of the queued message.",`
	now := `+   "description": "Send an email to any address. Returns the id of the queued message.",`
	for _, format := range []string{"text", "markdown", "sarif"} {
		r := airlock(t, "", "check", "--config", exampleConfig, "--drift", snap, "--format", format)
		out := r.stdout
		if format == "sarif" {
			var log struct {
				Runs []struct {
					Results []struct {
						RuleID  string `json:"ruleId"`
						Message struct{ Text string }
					}
				}
			}
			if err := json.Unmarshal([]byte(r.stdout), &log); err != nil {
				t.Fatalf("sarif: %v\n%s", err, r.stdout)
			}
			out = ""
			for _, run := range log.Runs {
				for _, res := range run.Results {
					if res.RuleID == "drift-tool-changed" {
						out += res.Message.Text + "\n"
					}
				}
			}
		}
		if !strings.Contains(out, was) || !strings.Contains(out, now) {
			t.Errorf("%s: no definition diff (want %q and %q):\n%s", format, was, now, out)
		}
	}
}
