package session_test

import (
	"reflect"
	"testing"

	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// TestSnapshot_InputIsWhatClassifyWasGiven: ToolInfo.Input rebuilds what the tool was
// classified from (explanations and fix hints re-run the trust functions on it), so
// classifying it again gives the tool's classification exactly, for tools with the
// config's labels, asserted hints and policy, live what-if changes, a name that
// blocks, and the channels.
func TestSnapshot_InputIsWhatClassifyWasGiven(t *testing.T) {
	yes := true
	sc := sessiontest.Script(sessiontest.Page(
		`{"name":"read","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`,
		`{"name":"send","description":"Sends mail.","inputSchema":{"type":"object"},"annotations":{"openWorldHint":true}}`,
		`{"name":"labelled","inputSchema":{"type":"object"}}`,
		`{"name":"bad name!","inputSchema":{"type":"object"}}`,
		`{"name":"twice","inputSchema":{"type":"object"}}`,
		`{"name":"twice","inputSchema":{}}`,
	))
	srv := sessiontest.RawServer(t, "s", trust.Trusted, sc)
	srv.Labels = []trust.Leg{trust.LegPrivateData}
	srv.Tools = map[string]config.Tool{
		"labelled": {Labels: []trust.Leg{trust.LegExfiltration}, Asserted: trust.Hints{ReadOnly: &yes}, Policy: trust.Allow},
		"send":     {Policy: trust.Ask},
	}
	other := sessiontest.RawServer(t, "u", trust.Untrusted, sessiontest.Script(sessiontest.Page(`{"name":"fetch","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`)))
	cfg := sessiontest.NewConfig(srv, other)
	m := sessiontest.Start(t, cfg, session.Options{})
	if err := m.SetToolPolicy(trust.Ref{Server: "s", Tool: "read"}, trust.Deny); err != nil {
		t.Fatal(err)
	}
	if err := m.SetDisabled(trust.Ref{Server: "u", Tool: "fetch"}, true); err != nil {
		t.Fatal(err)
	}
	snap := m.Snapshot()
	if len(snap.Tools) != 7 {
		t.Fatalf("%d tools, want 7", len(snap.Tools))
	}
	for _, ti := range snap.Tools {
		in := ti.Input()
		if in.Server != ti.Ref.Server || in.Name != ti.Ref.Tool {
			t.Errorf("%s: Input names %s/%s", ti.Ref.Qualified(), in.Server, in.Name)
		}
		if got := trust.Classify(in, cfg.Policy); !reflect.DeepEqual(got, ti.Class) {
			t.Errorf("%s: classifying Input again gives\n%+v\nthe snapshot holds\n%+v", ti.Ref.Qualified(), got, ti.Class)
		}
	}
	// The fields that matter here were set: the test looks at what it means to.
	ti, _ := snap.Tool("s", "labelled")
	if in := ti.Input(); len(in.ToolLabels) != 1 || len(in.ServerLabels) != 1 || in.Asserted.ReadOnly == nil || in.ToolPolicy != trust.Allow {
		t.Errorf("labelled's Input lost the config: %+v", in)
	}
	if ti, _ := snap.Tool("s", "bad name!"); ti.Input().NameProblem == "" {
		t.Error("the blocked name's Input has no name problem")
	}
	if ti, _ := snap.Tool("u", "fetch"); !ti.Input().Disabled {
		t.Error("the disabled tool's Input is not disabled")
	}
}
