package session_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

func setTool(server, tool string, tc config.Tool) func(*config.Config) {
	return func(c *config.Config) {
		for i := range c.Servers {
			if c.Servers[i].Name == server {
				if c.Servers[i].Tools == nil {
					c.Servers[i].Tools = map[string]config.Tool{}
				}
				c.Servers[i].Tools[tool] = tc
			}
		}
	}
}

func TestApprovalAnswers(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	a := sessiontest.AnswerWith(t, m,
		model.Response{Answer: model.AllowOnce},
		model.Response{Answer: model.Deny, Reason: "not now"},
		model.Response{Answer: model.AllowForContext},
		model.Response{Answer: model.Deny},
	)
	ctx := context.Background()
	create := func(ctxName, body string) (*session.Outcome, error) {
		return m.Call(ctx, model.CallRequest{Context: ctxName, Server: "notes", Tool: "create_note", Args: sessiontest.Args(`{"title":"t","body":"` + body + `"}`)})
	}

	out, err := create("", "one")
	if err != nil {
		t.Fatal(err)
	}
	p := <-a.Seen
	// The canonical bytes of the call (keys sorted): what is shown, hashed and sent.
	if p.Tool.Ref.Qualified() != "notes__create_note" || string(p.Request.Args) != `{"body":"one","title":"t"}` {
		t.Errorf("pending = %s %s, want the exact call", p.Tool.Ref.Qualified(), p.Request.Args)
	}
	if p.ArgsSHA256 != trust.ArgsSHA256([]byte(`{"body":"one","title":"t"}`)) {
		t.Errorf("pending hash does not bind the exact argument bytes")
	}
	if out.Verdict.By != trust.DecidedByPerson || out.Verdict.Action != trust.Allow {
		t.Errorf("verdict = %+v, want allowed by the person", out.Verdict)
	}

	// Allow once bound that call only: different arguments ask again.
	_, err = create("", "two")
	<-a.Seen
	d := sessiontest.Denied(t, err)
	if d.Reason != "not now" || d.Verdict.By != trust.DecidedByPerson || !strings.Contains(d.Error(), "not now") {
		t.Errorf("denial = %+v (%q), want the person's reason", d, d.Error())
	}

	// Allow for this context: asks once, then runs without asking.
	if _, err := create("", "three"); err != nil {
		t.Fatal(err)
	}
	<-a.Seen
	out, err = create("", "four")
	if err != nil {
		t.Fatal(err)
	}
	sessiontest.NoAsk(t, a)
	if out.Verdict.By != trust.DecidedByGrant {
		t.Errorf("granted call verdict = %+v", out.Verdict)
	}
	// Another context has no such grant.
	_, err = create("agent-1", "five")
	if p := <-a.Seen; p.Request.Context != "agent-1" {
		t.Errorf("pending context = %q", p.Request.Context)
	}
	sessiontest.Denied(t, err)
}

func TestApprovalTimeoutDenies(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{}, func(c *config.Config) { c.ApprovalTimeout = 200 * time.Millisecond })
	closed := make(chan string, 4)
	go func() {
		for {
			ev, ok := m.Next(context.Background())
			if !ok {
				return
			}
			if c, ok := ev.(model.ApprovalClosed); ok {
				closed <- c.Outcome
			}
		}
	}()
	_, err := m.Call(context.Background(), model.CallRequest{Server: "notes", Tool: "delete_note", Args: sessiontest.Args(`{"id":"n1"}`)})
	d := sessiontest.Denied(t, err)
	if d.Verdict.By != trust.DecidedByTimeout {
		t.Errorf("decided by %q, want timeout", d.Verdict.By)
	}
	if got := <-closed; got != "timed out" {
		t.Errorf("approval closed as %q", got)
	}
	if n := len(m.Engine().Pending()); n != 0 {
		t.Errorf("%d approvals still pending after the timeout", n)
	}
}

func TestApprovalWithdrawnByCaller(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	a := sessiontest.AnswerWith(t, m) // sees, never answers
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := m.Call(ctx, model.CallRequest{Server: "notes", Tool: "delete_note", Args: sessiontest.Args(`{"id":"n1"}`)})
		errc <- err
	}()
	p := <-a.Seen
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a withdrawn call ran")
	}
	if n := len(m.Engine().Pending()); n != 0 {
		t.Errorf("%d approvals still pending after withdrawal", n)
	}
	if err := m.Engine().Answer(p.ID, model.Response{Answer: model.AllowOnce}); err == nil {
		t.Error("answering a withdrawn call succeeded")
	}
}

func TestDenyPolicyNeverAsks(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{}, setTool("notes", "delete_note", config.Tool{Policy: trust.Deny}))
	a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.AllowOnce})
	ti := sessiontest.WantTier(t, m, "notes", "delete_note", trust.TierBlocked)
	if ti.Class.Action != trust.Deny {
		t.Errorf("action = %v", ti.Class.Action)
	}
	_, err := m.Call(context.Background(), model.CallRequest{Server: "notes", Tool: "delete_note", Args: sessiontest.Args(`{"id":"n1"}`)})
	if d := sessiontest.Denied(t, err); d.Verdict.By != trust.DecidedByPolicy {
		t.Errorf("decided by %q, want policy", d.Verdict.By)
	}
	sessiontest.NoAsk(t, a)
}

// Hostile case 37: untrusted content returned, then an exfiltration tool that policy allows
// asks anyway and names the call that tainted the context.
func TestTaintEscalatesAllowedExfiltration(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{}, setTool("mail", "send_email", config.Tool{Policy: trust.Allow}))
	// The demo's send_email is destructive: never granted for a context, so allowing it
	// for the context would deny it; it is allowed once.
	a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.AllowOnce}, model.Response{Answer: model.Deny})
	ctx := context.Background()
	send := func(ctxName string) (*session.Outcome, error) {
		return m.Call(ctx, model.CallRequest{Context: ctxName, Server: "mail", Tool: "send_email", Args: sessiontest.Args(`{"to":"a@example.com","subject":"s","body":"b"}`)})
	}
	// Clean context: policy allows, nobody is asked. (send_email is open world itself,
	// so its own result taints agent-0 from then on.)
	if out, err := send("agent-0"); err != nil || out.Verdict.By != trust.DecidedByPolicy {
		t.Fatalf("clean send: %v %+v", err, out)
	}
	sessiontest.NoAsk(t, a)
	if taint := m.Engine().Taint("agent-0"); taint.By.Qualified() != "mail__send_email" {
		t.Errorf("agent-0 taint = %+v, want mail__send_email (an open-world result)", taint)
	}

	fetch, err := m.Call(ctx, model.CallRequest{Server: "web", Tool: "fetch_url", Args: sessiontest.Args(`{"url":"https://blog.example.com/mcp-tips"}`)})
	if err != nil {
		t.Fatal(err)
	}
	taint := m.Engine().Taint("")
	if taint.By.Qualified() != "web__fetch_url" || taint.CallID != fetch.CallID {
		t.Fatalf("taint = %+v, want it to name the fetch %s", taint, fetch.CallID)
	}
	// Tainted: the same allowed tool now asks, and says why.
	if _, err := send(""); err != nil {
		t.Fatal(err)
	}
	p := <-a.Seen
	if p.Verdict.By != trust.DecidedByTaint || !strings.Contains(strings.Join(p.Verdict.Reasons, " "), "web__fetch_url") {
		t.Errorf("tainted ask = %+v, want taint naming web__fetch_url", p.Verdict)
	}
	// An answer does not carry over: the next tainted call asks again.
	_, err = send("")
	if p := <-a.Seen; p.Verdict.By != trust.DecidedByTaint {
		t.Errorf("after a grant the tainted call was decided by %q", p.Verdict.By)
	}
	sessiontest.Denied(t, err)
	// Another context is clean.
	if out, err := send("agent-1"); err != nil || out.Verdict.By != trust.DecidedByPolicy {
		t.Errorf("agent context send: %v %+v, want allowed by policy", err, out)
	}
	sessiontest.NoAsk(t, a)
	// Taint never decreases inside a context.
	m.Engine().EndContext("agent-1")
	if !m.Engine().Taint("").Tainted() {
		t.Error("the person's context lost its taint")
	}
}
