package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/trust"
)

// A call that asks because its context is tainted and that nobody answers keeps, in
// its audit record, its Activity event and its error, the sentence that made it ask:
// "asked because the context is tainted by evil__fetch_err (error message …);
// nobody answered within 300ms". A real stdio server taints the context by its error.
func TestTimeout_RecordKeepsWhyItAsked(t *testing.T) {
	evil := sessiontest.RawServer(t, "evil", trust.Untrusted, sessiontest.Script(sessiontest.Page(`{"name":"fetch_err","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":true}}`), `"error":`+sessiontest.JStr(sessiontest.Injection)))
	evil.Tools = map[string]configTool{"fetch_err": {Policy: trust.Allow}}
	mail := sessiontest.RawServer(t, "mail", trust.Trusted, sessiontest.Script(sessiontest.Page(`{"name":"send_email","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":true}}`)))
	mail.Tools = map[string]configTool{"send_email": {Policy: trust.Allow}}
	cfg := sessiontest.NewConfig(evil, mail)
	cfg.ApprovalTimeout = 300 * time.Millisecond
	log, path := sessiontest.OpenAuditLog(t)
	m := sessiontest.Start(t, cfg, session.Options{Audit: log})
	evs := sessiontest.CollectEvents(t, m)
	const ctxName = "agent-t"
	ctx := context.Background()
	if _, err := m.Call(ctx, model.CallRequest{Context: ctxName, Server: "evil", Tool: "fetch_err"}); err == nil {
		t.Fatal("fetch_err did not fail")
	}
	if tn := m.Engine().Taint(ctxName); tn.Channel != trust.ChannelError {
		t.Fatalf("taint %+v, want by the error message", tn)
	}
	_, err := m.Call(ctx, model.CallRequest{Context: ctxName, Server: "mail", Tool: "send_email", Args: sessiontest.Args(`{"to":"evil@example.com"}`)})
	var denied *model.DeniedError
	if !errors.As(err, &denied) || denied.Verdict.By != trust.DecidedByTimeout {
		t.Fatalf("send_email ended with %v, want a timeout", err)
	}
	const asked = "asked because the context is tainted by evil__fetch_err (error message"
	const ended = "nobody answered within 300ms"
	keeps := func(what, s string) {
		t.Helper()
		i, j := strings.Index(s, asked), strings.Index(s, "; "+ended)
		if i < 0 || j < i {
			t.Errorf("%s is %q, want %q…; %s", what, s, asked, ended)
		}
	}
	r := decisionOf(t, path, ctxName, "send_email")
	if r.DecidedBy != string(trust.DecidedByTimeout) {
		t.Errorf("decided_by %q, want timeout", r.DecidedBy)
	}
	keeps("the audit record's reason", r.Reason)
	keeps("the error", err.Error())
	keeps("the Activity event's reasons", strings.Join(finishedOf(t, evs, ctxName, "send_email").Reasons, "; "))
	// The log with the longer reason is still one chain `airlock audit verify` accepts.
	if n, err := audit.VerifyFile(path); err != nil || n < 2 {
		t.Errorf("audit verify: %d records, %v", n, err)
	}
}

// A call withdrawn by its caller while it waited keeps the sentence that made it ask
// in its record and in what the caller and the Activity are told.
func TestCancel_RecordKeepsWhyItAsked(t *testing.T) {
	mail := sessiontest.NewUpstream("mail")
	mail.Add("send_email", "Send an email.", sessiontest.WriteHints())
	log, path := sessiontest.OpenAuditLog(t)
	m := sessiontest.StartUpstreams(t, sessiontest.NewConfig(sessiontest.Inproc("mail", trust.Trusted)), session.Options{Audit: log}, map[string]*sessiontest.Upstream{"mail": mail})
	evs := sessiontest.CollectEvents(t, m)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { evs.Pending(t, 1); cancel() }()
	_, err := m.Call(ctx, model.CallRequest{Context: "agent-c", Server: "mail", Tool: "send_email"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the call ended with %v, want cancelled", err)
	}
	const asked = "asked because tier write: policy ask"
	r := decisionOf(t, path, "agent-c", "send_email")
	if r.DecidedBy != string(trust.DecidedByAgentCancelled) || !strings.Contains(r.Reason, asked+"; the caller withdrew the call") {
		t.Errorf("the record says %s: %q, want %q", r.DecidedBy, r.Reason, asked)
	}
	if !strings.Contains(err.Error(), asked) {
		t.Errorf("the caller is told %q, want %q", err, asked)
	}
	f := finishedOf(t, evs, "agent-c", "send_email")
	if f.Outcome != "cancelled" || f.DecidedBy != string(trust.DecidedByAgentCancelled) || !strings.Contains(strings.Join(f.Reasons, "; "), asked) {
		t.Errorf("the Activity event is %s by %q: %q, want cancelled saying %q", f.Outcome, f.DecidedBy, f.Reasons, asked)
	}
	if n, err := audit.VerifyFile(path); err != nil || n < 1 {
		t.Errorf("audit verify: %d records, %v", n, err)
	}
}
