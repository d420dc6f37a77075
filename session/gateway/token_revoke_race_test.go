package gateway_test

// An allow given right after `airlock gateway token revoke` returned (before the
// gateway's next look at the tokens file) must not run the revoked token's call.

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/gateway"
)

func TestAgentIdentity_AllowRightAfterRevokeNotForwarded(t *testing.T) {
	f := ciBotSetup(t, "x")
	mail, m, evs, a := f.mail, f.m, f.evs, f.a
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = a.CallTool(context.Background(), &mcp.CallToolParams{Name: "mail__send_email", Arguments: map[string]any{"to": "x"}})
	}()
	p := evs.Pending(t, 1)
	if err := gateway.RevokeToken(f.dir, "ci-bot"); err != nil {
		t.Fatal(err)
	}
	// revoke has returned: the person now presses allow on the (still shown) question.
	// (An answer refused means the gateway withdrew the question first: also right.)
	_ = m.Engine().Answer(p.ID, model.Response{Answer: model.AllowOnce})
	<-done
	if n := len(mail.Calls("send_email")); n != 0 {
		t.Errorf("send_email ran %d times after `token revoke` returned", n)
	}
	wantRevokedDecision(t, f.audit)
}
