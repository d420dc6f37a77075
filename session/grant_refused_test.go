package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/trust"
)

// decisionOf is the decision record of the call to tool in context ctxName.
func decisionOf(t *testing.T, path, ctxName, tool string) audit.Record {
	t.Helper()
	for _, r := range sessiontest.AuditRecords(t, path) {
		if r.Kind == "decision" && r.Context == ctxName && r.Tool == tool {
			return r
		}
	}
	t.Fatalf("no decision record of %s in context %s", tool, ctxName)
	return audit.Record{}
}

// finishedOf waits for the CallFinished event of the call to tool in context ctxName.
func finishedOf(t *testing.T, evs *sessiontest.EventLog, ctxName, tool string) model.CallFinished {
	t.Helper()
	ev := evs.Wait(t, "the call's CallFinished event", 10*time.Second, func(ev model.Event) bool {
		f, ok := ev.(model.CallFinished)
		return ok && f.Context == ctxName && f.Tool == tool
	})
	return ev.(model.CallFinished)
}

// A person's "allow for this context" on a destructive tool cannot become a grant:
// the engine refuses the answer (the call is denied, nothing is granted, the server
// never receives it), and the Activity event, the closed question and the audit record
// say so, never "allowed for this context".
func TestAnswer_ContextGrantForDestructiveRefusedAndSaidSo(t *testing.T) {
	notes := sessiontest.NewUpstream("notes")
	notes.Add("delete", "Delete a note.", &mcp.ToolAnnotations{DestructiveHint: sessiontest.Hint(true), OpenWorldHint: sessiontest.Hint(false)})
	log, path := sessiontest.OpenAuditLog(t)
	m := sessiontest.StartUpstreams(t, sessiontest.NewConfig(sessiontest.Inproc("notes", trust.Trusted)), session.Options{Audit: log}, map[string]*sessiontest.Upstream{"notes": notes})
	evs := sessiontest.CollectEvents(t, m)
	const ctxName = "agent-d"
	go func() {
		p := evs.Pending(t, 1)
		if err := m.Engine().Answer(p.ID, model.Response{Answer: model.AllowForContext}); err != nil {
			t.Error(err)
		}
	}()
	_, err := m.Call(context.Background(), model.CallRequest{Context: ctxName, Server: "notes", Tool: "delete"})
	var denied *model.DeniedError
	if !errors.As(err, &denied) || denied.Verdict.By != trust.DecidedByPolicy {
		t.Fatalf("the call ended with %v, want a denial by policy", err)
	}
	if g := m.Engine().Grants(); len(g) != 0 {
		t.Errorf("a destructive tool was granted: %+v", g)
	}
	if got := notes.Calls("delete"); len(got) != 0 {
		t.Errorf("the server received the call %d times", len(got))
	}
	const said = "never allowed for a context"
	f := finishedOf(t, evs, ctxName, "delete")
	why := strings.Join(f.Reasons, "; ")
	if f.Decision != "deny" || f.Outcome != "denied" || !strings.Contains(why, said) || strings.Contains(why, "allowed for this context") {
		t.Errorf("the Activity event says %s/%s: %q, want a denial saying %q", f.Decision, f.Outcome, why, said)
	}
	closed := evs.Wait(t, "the question closed", 5*time.Second, func(ev model.Event) bool { _, ok := ev.(model.ApprovalClosed); return ok }).(model.ApprovalClosed)
	if strings.Contains(closed.Outcome, "for this context") && !strings.Contains(closed.Outcome, said) {
		t.Errorf("the closed question says %q, as if it were granted", closed.Outcome)
	}
	r := decisionOf(t, path, ctxName, "delete")
	if r.Decision != "deny" || r.DecidedBy != string(trust.DecidedByPolicy) || !strings.Contains(r.Reason, said) || strings.Contains(r.Reason, "allowed for this context") {
		t.Errorf("the audit record says %s by %s: %q", r.Decision, r.DecidedBy, r.Reason)
	}
	for _, r := range sessiontest.AuditRecords(t, path) {
		if r.Kind == "grant" {
			t.Errorf("a grant was audited: %+v", r)
		}
	}
}
