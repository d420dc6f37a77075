package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/session/audit"
)

// `airlock call --yes` in a tainted context: taint made the call ask, and the
// answer came from the command line, not from a person. The audit record and the
// line the command prints say so, and `airlock audit verify` still passes.
func TestCallYes_TaintedIsAuditedAsTheFlag(t *testing.T) {
	state := t.TempDir()
	cfg := stateConfig(t, state, demoServerTOML("web", "trusted"),
		demoServerTOML("mail", "untrusted", "[servers.mail.tools.send_email]", "policy = \"allow\""))
	if r := fetchBlog(t, cfg); r.code != 0 {
		t.Fatalf("fetch: exit %d\n%s", r.code, r.stderr)
	}
	r := airlock(t, "", "call", "mail", "send_email", "--yes", "--config", cfg, "--args", `{"to":"a@example.com","subject":"s","body":"b"}`)
	if r.code != 0 {
		t.Fatalf("--yes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	recs := auditRecords(t, filepath.Join(state, "audit.jsonl"), func(r audit.Record) bool {
		return r.Kind == "decision" && r.Tool == "send_email"
	})
	if len(recs) != 1 {
		t.Fatalf("%d decision records of send_email, want 1", len(recs))
	}
	if got := recs[0]; got.DecidedBy != "taint-asked-then-flag" || strings.Contains(got.Reason, "person") || !strings.Contains(got.Reason, "--yes") {
		t.Errorf("the record says decided_by %q, reason %q; want taint-asked-then-flag, naming --yes and no person", got.DecidedBy, got.Reason)
	}
	if !strings.Contains(r.stderr, "asked because of taint; allowed with --yes on the command line") || strings.Contains(r.stderr, "by taint-asked") {
		t.Errorf("the command's own line does not say what happened:\n%s", r.stderr)
	}
	if v := auditVerify(t, cfg); v.code != 0 {
		t.Errorf("verify: exit %d %s %s", v.code, v.stdout, v.stderr)
	}
}
