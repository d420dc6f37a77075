package session_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

func hazardKinds(s *session.Snapshot) string {
	var k []string
	for _, h := range s.Hazards {
		k = append(k, string(h.Kind))
	}
	return strings.Join(k, ",")
}

// classes summarises every tool's tier and action, the thing a merge must reproduce.
func classes(s *session.Snapshot) map[string]string {
	out := map[string]string{}
	for _, t := range s.Tools {
		out[t.Ref.Qualified()] = t.Class.Tier.String() + "/" + t.Class.Action.String()
	}
	return out
}

// The example config with the in-process demo servers standing in for its commands.
func exampleManager(t *testing.T, text string) *session.Manager {
	t.Helper()
	cfg, err := config.Parse([]byte(text), "config.toml", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	cfg.StateDir = ""
	set := demoSet()
	return start(t, cfg, session.Options{InProcess: map[string]*mcp.Server(set)})
}

func TestWhatIfRecomputesAndExportReproduces(t *testing.T) {
	example, err := os.ReadFile("../config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	m := exampleManager(t, string(example))
	before := m.Snapshot()
	if !strings.Contains(hazardKinds(before), "lethal-trifecta") {
		t.Fatalf("example has no trifecta: %s", hazardKinds(before))
	}
	send := trust.Ref{Server: "mail", Tool: "send_email"}

	// Break the trifecta by denying the only exfiltration tool, and block docs.
	if err := m.SetToolPolicy(send, trust.Deny); err != nil {
		t.Fatal(err)
	}
	if err := m.SetServerTrust("docs", trust.BlockedServer); err != nil {
		t.Fatal(err)
	}
	if err := m.SetDisabled(trust.Ref{Server: "notes", Tool: "create_note"}, true); err != nil {
		t.Fatal(err)
	}
	after := m.Snapshot()
	if after.Version == before.Version {
		t.Error("snapshot version did not move")
	}
	if strings.Contains(hazardKinds(after), "lethal-trifecta") {
		t.Errorf("trifecta still there after denying send_email: %s", hazardKinds(after))
	}
	if ti, _ := after.Tool("mail", "send_email"); ti.Class.Tier != trust.TierBlocked {
		t.Errorf("denied send_email tier = %v", ti.Class.Tier)
	}
	if ti, _ := after.Tool("docs", "get_doc"); ti.Class.Tier != trust.TierBlocked {
		t.Errorf("docs blocked: get_doc tier = %v, want blocked", ti.Class.Tier)
	}
	if !m.Unsaved() {
		t.Error("changes not marked unsaved")
	}

	frag := m.ExportOverrides()
	for _, want := range []string{"[servers.docs]", `trust = "blocked"`, "[servers.mail.tools.send_email]", `policy = "deny"`, "notes__create_note"} {
		if !strings.Contains(frag, want) {
			t.Errorf("fragment lacks %q:\n%s", want, frag)
		}
	}

	// Merge the fragment into the example as a person would, and load the result.
	var base, patch map[string]any
	if _, err := toml.Decode(string(example), &base); err != nil {
		t.Fatal(err)
	}
	if _, err := toml.Decode(frag, &patch); err != nil {
		t.Fatalf("fragment is not TOML: %v\n%s", err, frag)
	}
	merge(base, patch)
	var merged bytes.Buffer
	if err := toml.NewEncoder(&merged).Encode(base); err != nil {
		t.Fatal(err)
	}
	m2 := exampleManager(t, merged.String())
	got, want := classes(m2.Snapshot()), classes(after)
	for k, v := range want {
		if _, listed := got[k]; !listed && strings.HasPrefix(v, "blocked/") {
			continue // a server blocked in the config is never connected: its tools are not even listed
		}
		if got[k] != v {
			t.Errorf("%s: merged config gives %s, the session gave %s", k, got[k], v)
		}
	}
	if hazardKinds(m2.Snapshot()) != hazardKinds(after) {
		t.Errorf("hazards after merge %q, in the session %q", hazardKinds(m2.Snapshot()), hazardKinds(after))
	}

	// Undoing every change leaves nothing unsaved.
	_ = m.SetToolPolicy(send, trust.ActionUnset)
	_ = m.SetServerTrust("docs", trust.Trusted)
	_ = m.SetDisabled(trust.Ref{Server: "notes", Tool: "create_note"}, false)
	if m.Unsaved() || m.ExportOverrides() != "" {
		t.Error("undone changes still unsaved")
	}
	if hazardKinds(m.Snapshot()) != hazardKinds(before) {
		t.Errorf("hazards after undo %q, want %q", hazardKinds(m.Snapshot()), hazardKinds(before))
	}
}

func merge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}
