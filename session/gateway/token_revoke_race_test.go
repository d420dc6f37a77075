package gateway_test

// An allow given right after `airlock gateway token revoke` returned (before the
// gateway's next look at the tokens file) must not run the revoked token's call.

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/trust"
)

func TestAgentIdentity_AllowRightAfterRevokeNotForwarded(t *testing.T) {
	mail, m, evs, path := tokenSetup(t)
	g := startGateway(t, m)
	dir := gatewayStateDir(t, g)
	tok := namedToken(t, g, "ci-bot")
	a, err := agentWithToken(t, g, tok, "x")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = a.CallTool(context.Background(), &mcp.CallToolParams{Name: "mail__send_email", Arguments: map[string]any{"to": "x"}})
	}()
	p := evs.Pending(t, 1)
	if err := gateway.RevokeToken(dir, "ci-bot"); err != nil {
		t.Fatal(err)
	}
	// revoke has returned: the person now presses allow on the (still shown) question.
	// (An answer refused means the gateway withdrew the question first: also right.)
	_ = m.Engine().Answer(p.ID, model.Response{Answer: model.AllowOnce})
	<-done
	if n := len(mail.Calls("send_email")); n != 0 {
		t.Errorf("send_email ran %d times after `token revoke` returned", n)
	}
	var rec *audit.Record
	for _, r := range sessiontest.AuditRecords(t, path) {
		if r.Kind == "decision" && r.Context == "token:ci-bot" {
			rec = &r
		}
	}
	if rec == nil || rec.DecidedBy != string(trust.DecidedByAgentGone) || !strings.Contains(rec.Reason, "token was revoked") {
		t.Errorf("decision record %+v, want agent-gone saying the token was revoked", rec)
	}
}
