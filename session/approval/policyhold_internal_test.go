package approval

import (
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
)

// A grant the person holds for a tool the managed policy holds at ask does not let
// its calls run unasked, in Decide and in DecideCall, and the verdict says why.
func TestPolicyHold_GrantDoesNotOutrank(t *testing.T) {
	e := New(Options{Now: time.Now})
	tool := model.ToolInfo{Ref: trust.Ref{Server: "web", Tool: "fetch"}, Fingerprint: "f1",
		Class: trust.Classification{Tier: trust.TierWrite, Action: trust.Ask, Reasons: []string{"tier write: policy ask"}}}
	e.grant("", "c1", tool)
	if v := e.Decide("", tool); v.Action != trust.Allow || v.By != trust.DecidedByGrant {
		t.Fatalf("without a policy the grant allows: %+v", v)
	}
	tool.Managed = &model.PolicyHold{Action: trust.Ask, Source: "policy: /etc/airlock/policy.toml:4"}
	if v := e.Decide("", tool); v.Action != trust.Ask {
		t.Errorf("Decide under the policy's ask: %+v", v)
	}
	v, _ := e.DecideCall("", tool, []byte(`{}`), true)
	if v.Action != trust.Ask || !strings.Contains(strings.Join(v.Reasons, "; "), "your grant for this context would have allowed this call, but the team policy asks for every call of this tool (policy: /etc/airlock/policy.toml:4)") {
		t.Errorf("DecideCall under the policy's ask: %+v", v)
	}
}
