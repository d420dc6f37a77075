package approval_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/trust"
)

// What changed under a question or a grant is said in sentences a person reads,
// not as "tool policy allow → the tier's".
func TestToolChanges_SaidAsSentences(t *testing.T) {
	base := model.ToolInfo{Ref: trust.Ref{Server: "mail", Tool: "send_email"}, Fingerprint: "f1", ServerTrust: trust.Trusted,
		Class: trust.Classification{Tier: trust.TierWrite, Action: trust.Ask}}
	with := func(f func(*model.ToolInfo)) model.ToolInfo {
		t := base
		f(&t)
		return t
	}
	for _, tt := range []struct {
		name       string
		shown, now model.ToolInfo
		want       []string
	}{
		{"tool policy to the tier's", with(func(t *model.ToolInfo) { t.Policy = trust.Allow }), base,
			[]string{"the tool's policy changed from allow to the tier's default"}},
		{"tool policy set", base, with(func(t *model.ToolInfo) { t.Policy = trust.Deny }),
			[]string{"the tool's policy changed from the tier's default to deny"}},
		{"tier's policy", base, with(func(t *model.ToolInfo) { t.Class.Action = trust.Allow }),
			[]string{"the tier's policy changed from ask to allow"}},
		// The legs a tool fills move with labels and the server's trust, not only
		// with its definition: a question that showed none must not stand for one
		// that now sends data out.
		{"a leg gained", base, with(func(t *model.ToolInfo) { t.Class.Legs = []trust.Leg{trust.LegExfiltration} }),
			[]string{"the legs it fills changed from none to exfiltration"}},
		{"a leg lost", with(func(t *model.ToolInfo) { t.Class.Legs = []trust.Leg{trust.LegPrivateData, trust.LegExfiltration} }),
			with(func(t *model.ToolInfo) { t.Class.Legs = []trust.Leg{trust.LegPrivateData} }),
			[]string{"the legs it fills changed from private-data, exfiltration to private-data"}},
		{"labelled persistent", base, with(func(t *model.ToolInfo) { t.Class.Persistent = true }),
			[]string{"it now writes to a persistent store"}},
		{"same legs, another slice", with(func(t *model.ToolInfo) { t.Class.Legs = []trust.Leg{trust.LegPrivateData} }),
			with(func(t *model.ToolInfo) { t.Class.Legs = append([]trust.Leg(nil), trust.LegPrivateData) }), nil},
	} {
		if diff := cmp.Diff(tt.want, approval.ToolChanges(tt.shown, tt.now)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
