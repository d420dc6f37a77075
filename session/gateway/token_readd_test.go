package gateway_test

// Revoking a token and adding one of the same name again, before the gateway
// looks at the tokens file, must still end the revoked value's sessions: a session
// belongs to the token value that opened it, not only to its name.

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/gateway"
)

func TestAgentIdentity_RevokeThenReaddEndsOldSessions(t *testing.T) {
	f := ciBotSetup(t, "thief")
	mail, m, evs, g, dir, a := f.mail, f.m, f.evs, f.g, f.dir, f.a
	// The thief's call waits for a person.
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := a.CallTool(context.Background(), &mcp.CallToolParams{Name: "mail__send_email", Arguments: map[string]any{"to": "attacker"}})
		if err != nil {
			done <- nil
			return
		}
		done <- res
	}()
	p := evs.Pending(t, 1)
	// The person "rotates" the leaked named token: revoke, add again (a script).
	if err := gateway.RevokeToken(dir, "ci-bot"); err != nil {
		t.Fatal(err)
	}
	if _, err := gateway.AddToken(dir, "ci-bot", time.Now()); err != nil {
		t.Fatal(err)
	}
	// The revoked value's question is withdrawn, as after a plain revoke (the
	// deadline only guards against a hang).
	sessiontest.WaitFor(t, "the revoked token's question to be withdrawn after revoke and re-add", 10*time.Second, func() bool {
		return !waitingQuestion(m, p.ID)
	})
	// The person, seeing a question of token:ci-bot, allows it.
	_ = m.Engine().Answer(p.ID, model.Response{Answer: model.AllowOnce})
	res := <-done
	if res != nil && !res.IsError {
		t.Errorf("the revoked token's call ran and its result went to the revoked holder: %s", resultText(res))
	}
	if n := len(mail.Calls("send_email")); n != 0 {
		t.Errorf("send_email ran %d times for a revoked token", n)
	}
	sessiontest.WaitFor(t, "the revoked token value's session to close", 10*time.Second, func() bool { return g.OpenSessions() == 0 })
}

// waitingQuestion reports whether the question id still waits for a person.
func waitingQuestion(m *session.Manager, id uint64) bool {
	for _, q := range m.Engine().Pending() {
		if q.ID == id {
			return true
		}
	}
	return false
}

// A token added again under a revoked one's name is another token: it does not
// inherit what was granted to the old value's holder, even when the gateway never
// saw the name missing.
func TestAgentIdentity_ReaddedTokenDoesNotInheritGrants(t *testing.T) {
	f := ciBotSetup(t, "thief")
	mail, m, evs, g, dir := f.mail, f.m, f.evs, f.g, f.dir
	answerInBackground(t, m, evs, 1, model.Response{Answer: model.AllowForContext})
	if res := callTool(t, f.a, "mail__send_email"); res.IsError {
		t.Fatalf("allowed for the context: %s", resultText(res))
	}
	if err := gateway.RevokeToken(dir, "ci-bot"); err != nil {
		t.Fatal(err)
	}
	newTok, err := gateway.AddToken(dir, "ci-bot", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sessiontest.WaitFor(t, "the old value's grant to end", 10*time.Second, func() bool {
		for _, gr := range m.Engine().Grants() {
			if gr.Context == "token:ci-bot" {
				return false
			}
		}
		return true
	})
	b := mustAgentWithToken(t, g, newTok, "ci")
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- callTool(t, b, "mail__send_email") }()
	p := evs.Pending(t, 2)
	if err := m.Engine().Answer(p.ID, model.Response{Answer: model.Deny, Reason: "asked, as it should"}); err != nil {
		t.Fatal(err)
	}
	if res := <-done; !res.IsError {
		t.Errorf("the new token's call ran on the old value's grant: %s", resultText(res))
	}
	if n := len(mail.Calls("send_email")); n != 1 {
		t.Errorf("send_email ran %d times, want 1 (the grant's own call)", n)
	}
}
