package session_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

func hazardKinds(s *model.Snapshot) string {
	var k []string
	for _, h := range s.Hazards {
		k = append(k, string(h.Kind))
	}
	return strings.Join(k, ",")
}

// classes summarises every tool's tier and action, the thing a merge must reproduce.
func classes(s *model.Snapshot) map[string]string {
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
	return sessiontest.Start(t, cfg, session.Options{InProcess: map[string]*mcp.Server(set)})
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
	for _, want := range []string{`# [servers.docs] is already in the config: set trust = "blocked" there`, "[servers.mail.tools.send_email]", `policy = "deny"`, "notes__create_note"} {
		if !strings.Contains(frag, want) {
			t.Errorf("fragment lacks %q:\n%s", want, frag)
		}
	}

	// Append the fragment to the example, as README says, and make the one edit it
	// asks for by hand (docs is already a table there), then load the result.
	appended := string(example) + "\n" + frag
	var base map[string]any
	if _, err := toml.Decode(appended, &base); err != nil {
		t.Fatalf("the example with the fragment appended is not TOML: %v\n%s", err, frag)
	}
	base["servers"].(map[string]any)["docs"].(map[string]any)["trust"] = "blocked"
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

// TestWhatIfExport_HostileToolNameYieldsNoTable: a tool name is server-controlled. One
// that carries newlines, a table header and a bidi control must stay inside its
// quoted key and its comment: the fragment defines no table but the tool's own.
func TestWhatIfExport_HostileToolNameYieldsNoTable(t *testing.T) {
	hostile := "x\"]\n[servers.mail.tools.send_email]\npolicy = \"allow\"\n#\u202e\x1b[2J\\"
	cfg := sessiontest.NewConfig(sessiontest.TestServer(t, "evil", "raw", trust.Untrusted), sessiontest.TestServer(t, "mail", "raw", trust.Untrusted))
	m := session.New(cfg, session.Options{})
	t.Cleanup(func() { m.Close() })
	ref := trust.Ref{Server: "evil", Tool: hostile}
	if err := m.SetToolPolicy(ref, trust.Allow); err != nil {
		t.Fatal(err)
	}
	if err := m.SetDisabled(trust.Ref{Server: "evil", Tool: hostile + "2"}, true); err != nil {
		t.Fatal(err)
	}
	frag := m.ExportOverrides()
	for _, bad := range []string{"\u202e", "\x1b", "\r"} {
		if strings.Contains(frag, bad) {
			t.Errorf("fragment holds a raw %q:\n%s", bad, frag)
		}
	}
	var tree map[string]map[string]map[string]map[string]map[string]any
	if _, err := toml.Decode(frag, &tree); err != nil {
		t.Fatalf("fragment is not TOML: %v\n%s", err, frag)
	}
	if _, ok := tree["servers"]["mail"]; ok {
		t.Errorf("the hostile name made a table for mail:\n%s", frag)
	}
	tools := tree["servers"]["evil"]["tools"]
	if len(tools) != 2 || tools[hostile]["policy"] != "allow" || tools[hostile+"2"]["policy"] != "deny" {
		t.Errorf("tools decoded from the fragment = %q\n%s", tools, frag)
	}
}

// TestWhatIfExport_AppendsToExampleConfig: the fragment appended to the config it came
// from parses: it defines no table the config already has; a change to one is a
// comment saying what to edit.
func TestWhatIfExport_AppendsToExampleConfig(t *testing.T) {
	example, err := os.ReadFile("../config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, example, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	m := session.New(cfg, session.Options{})
	t.Cleanup(func() { m.Close() })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(m.SetToolPolicy(trust.Ref{Server: "mail", Tool: "send_email"}, trust.Deny))    // new table
	must(m.SetDisabled(trust.Ref{Server: "notes", Tool: "create_note"}, true))          // new table
	must(m.SetToolPolicy(trust.Ref{Server: "notes", Tool: "delete_note"}, trust.Allow)) // defined in the example
	must(m.SetServerTrust("docs", trust.BlockedServer))                                 // defined in the example
	frag := m.ExportOverrides()
	merged, err := config.Parse(append(append(example, '\n'), frag...), path, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("the example with the fragment appended does not load: %v\n%s", err, frag)
	}
	tools := map[string]config.Tool{}
	for _, s := range merged.Servers {
		for name, tool := range s.Tools {
			tools[s.Name+"__"+name] = tool
		}
	}
	if tools["mail__send_email"].Policy != trust.Deny || tools["notes__create_note"].Policy != trust.Deny {
		t.Errorf("appended policies: send_email %v, create_note %v\n%s", tools["mail__send_email"].Policy, tools["notes__create_note"].Policy, frag)
	}
	for _, want := range []string{
		`# [servers.docs] is already in the config: set trust = "blocked" there`,
		`# [servers.notes.tools.delete_note] is already in the config: set policy = "allow" there`,
	} {
		if !strings.Contains(frag, want) {
			t.Errorf("fragment lacks %q:\n%s", want, frag)
		}
	}
}

// TestWhatIfExport_InlineToolsTable: a config whose tools are an inline table; the
// fragment's new tool table, appended, loads (airlock's TOML parser accepts the
// addition) and both the inline tool and the new one keep their policies.
func TestWhatIfExport_InlineToolsTable(t *testing.T) {
	src := "[servers.mail]\ncommand = \"srv\"\ntools = { send_email = { policy = \"ask\" } }\n"
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	m := session.New(cfg, session.Options{})
	t.Cleanup(func() { m.Close() })
	if err := m.SetToolPolicy(trust.Ref{Server: "mail", Tool: "read_inbox"}, trust.Deny); err != nil {
		t.Fatal(err)
	}
	if err := m.SetToolPolicy(trust.Ref{Server: "mail", Tool: "send_email"}, trust.Deny); err != nil {
		t.Fatal(err)
	}
	frag := m.ExportOverrides()
	merged, err := config.Parse([]byte(src+frag), path, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("appended config does not load: %v\n%s", err, frag)
	}
	tools := merged.Servers[0].Tools
	if tools["read_inbox"].Policy != trust.Deny || tools["send_email"].Policy != trust.Ask {
		t.Errorf("merged tools %+v\n%s", tools, frag)
	}
	if !strings.Contains(frag, `# [servers.mail.tools.send_email] is already in the config: set policy = "deny" there`) {
		t.Errorf("fragment:\n%s", frag)
	}
}

// An export never overwrites a file. With a changes file already
// there (the person's own, or an earlier export), the next export goes to a new
// numbered file and the old one keeps every byte.
func TestWhatIfExport_NeverOverwrites(t *testing.T) {
	example, err := os.ReadFile("../config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	m := exampleManager(t, string(example))
	dir := t.TempDir()
	m.Config().Path = filepath.Join(dir, "config.toml")
	if err := m.SetToolPolicy(trust.Ref{Server: "mail", Tool: "send_email"}, trust.Deny); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(dir, "config.changes.toml")
	if err := os.WriteFile(mine, []byte("# my own notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for range 2 {
		p, err := m.WriteOverrides()
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	want := []string{filepath.Join(dir, "config.changes-2.toml"), filepath.Join(dir, "config.changes-3.toml")}
	if paths[0] != want[0] || paths[1] != want[1] {
		t.Errorf("exports went to %v, want %v", paths, want)
	}
	if b, _ := os.ReadFile(mine); string(b) != "# my own notes\n" {
		t.Errorf("the existing changes file was overwritten: %q", b)
	}
	for _, p := range paths {
		if b, err := os.ReadFile(p); err != nil || !strings.Contains(string(b), "deny") {
			t.Errorf("%s: %v %q", p, err, b)
		}
	}
}
