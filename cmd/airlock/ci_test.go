package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ciConfig is config.example.toml with every server's command pointing at a binary
// the CI runner does not have.
func ciConfig(t *testing.T, dir string) string {
	t.Helper()
	src, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	ci := strings.ReplaceAll(string(src), `command = "airlock"`, `command = "/opt/not-installed/mcp-server"`)
	path := filepath.Join(dir, "airlock.toml")
	if err := os.WriteFile(path, []byte(ci), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A snapshot taken where the servers run is checked in CI with no
// server started and none of their commands installed; tiers, hazards and --fail-on
// come out as live.
func TestCheckSnapshot_WithoutServersOrCommands(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "airlock-snapshot.json")
	r := snapshotExample(t, snap)
	if r.code != 0 || !strings.Contains(r.stderr, "4 servers, 7 tools") {
		t.Fatalf("snapshot: exit %d\n%s", r.code, r.stderr)
	}
	cfg := ciConfig(t, dir)

	live := airlock(t, "", "check", "--config", exampleConfig, "--format", "json")
	off := airlock(t, "", "check", "--config", cfg, "--snapshot", snap, "--format", "json")
	if off.code != 0 {
		t.Fatalf("check --snapshot: exit %d\n%s", off.code, off.stderr)
	}
	var a, b checkJSON
	if err := json.Unmarshal([]byte(live.stdout), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(off.stdout), &b); err != nil {
		t.Fatal(err)
	}
	if b.Source != "snapshot" || len(b.Hazards) != len(a.Hazards) || len(b.Tools) != len(a.Tools) {
		t.Fatalf("offline %d hazards %d tools, live %d %d", len(b.Hazards), len(b.Tools), len(a.Hazards), len(a.Tools))
	}
	for i := range a.Hazards {
		if a.Hazards[i].ID != b.Hazards[i].ID {
			t.Errorf("hazard %d: live %s offline %s", i, a.Hazards[i].ID, b.Hazards[i].ID)
		}
	}
	for i := range a.Tools {
		if a.Tools[i].Qualified != b.Tools[i].Qualified || a.Tools[i].Tier != b.Tools[i].Tier || a.Tools[i].Policy != b.Tools[i].Policy {
			t.Errorf("tool %d: live %+v offline %+v", i, a.Tools[i], b.Tools[i])
		}
	}

	r = airlock(t, "", "check", "--config", cfg, "--snapshot", snap, "--fail-on", "lethal-trifecta", "--format", "github")
	if r.code != 4 || !strings.Contains(r.stdout, "::error file=") || !strings.Contains(r.stderr, "--fail-on matched lethal-trifecta:") {
		t.Errorf("--fail-on on a snapshot: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "check", "--config", cfg, "--snapshot", snap, "--format", "junit")
	var suites struct {
		XMLName xml.Name `xml:"testsuites"`
	}
	if r.code != 0 || xml.Unmarshal([]byte(r.stdout), &suites) != nil {
		t.Errorf("junit: exit %d\n%s", r.code, r.stdout)
	}
	// The report of a snapshot is a baseline: nothing new, nothing fails.
	base := filepath.Join(dir, "baseline.json")
	if err := os.WriteFile(base, []byte(off.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	r = airlock(t, "", "check", "--config", cfg, "--snapshot", snap, "--baseline", base, "--fail-on", "any")
	if r.code != 0 {
		t.Errorf("every hazard in the baseline: exit %d\n%s", r.code, r.stderr)
	}
}

// --drift connects and reports what differs from the snapshot; --fail-on drift exits 4.
func TestCheckDrift_FailOnDriftExits4(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "snap.json")
	if r := snapshotExample(t, snap); r.code != 0 {
		t.Fatalf("snapshot: %d %s", r.code, r.stderr)
	}
	r := airlock(t, "", "check", "--config", exampleConfig, "--drift", snap, "--fail-on", "drift")
	if r.code != 0 {
		t.Fatalf("no drift: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The committed snapshot says send_email was described differently, and lists a
	// tool the server no longer has.
	b, _ := os.ReadFile(snap)
	changed := strings.Replace(string(b), "Send an email to any address.", "Send an email to your own address only.", 1)
	changed = strings.Replace(changed, `"name": "search_docs",`, `"name": "search_docs_old",`, 1)
	if changed == string(b) {
		t.Fatal("setup: nothing replaced")
	}
	if err := os.WriteFile(snap, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	r = airlock(t, "", "check", "--config", exampleConfig, "--drift", snap, "--fail-on", "drift", "--format", "json")
	if r.code != 4 {
		t.Fatalf("drift: exit %d, want 4\n%s", r.code, r.stderr)
	}
	var got checkJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, d := range got.Drift {
		var f struct{ Kind, Server, Tool string }
		_ = json.Unmarshal(d, &f)
		kinds = append(kinds, f.Kind+" "+f.Server+" "+f.Tool)
	}
	want := "tool-added docs search_docs,tool-removed docs search_docs_old,tool-changed mail send_email"
	if strings.Join(kinds, ",") != want {
		t.Errorf("drift %v, want %s", kinds, want)
	}
}

// Every exit code of check that README documents, including 2 for a bad flag.
func TestCheckExitCodes_BadFlagsAre2(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--no-such-flag"},
		{"check", "--format", "yaml"},
		{"check", "--json", "--format", "sarif"},
		{"check", "--fail-on", "everything"},
		{"check", "--fail-on", "drift"}, // drift without --drift
		{"check", "--snapshot", "a.json", "--drift", "b.json"},
		{"snapshot"},
	} {
		if r := airlock(t, "", args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`{"schema_version": 99, "servers": []}`), 0o600)
	if r := airlock(t, "", "check", "--config", ciConfig(t, dir), "--snapshot", bad); r.code != 1 || !strings.Contains(r.stderr, "schema_version 99") {
		t.Errorf("unreadable snapshot: exit %d %s", r.code, r.stderr)
	}
}

// `snippet --env` shows no secret; `token --export` gives the line
// for eval; rotate-token replaces the token without printing it.
func TestGatewaySnippetEnv_TokenStaysOffScreen(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, "state_dir = \""+state+"\"\n[gateway]\nlisten = \"127.0.0.1:7999\"\n")
	r := airlock(t, "", "gateway", "token", "--export", "--config", cfg)
	tok, _ := os.ReadFile(filepath.Join(state, "gateway.token"))
	token := strings.TrimSpace(string(tok))
	if r.code != 0 || len(token) != 64 || r.stdout != "export AIRLOCK_TOKEN='"+token+"'\n" {
		t.Fatalf("token --export: exit %d %q (token %q)", r.code, r.stdout, token)
	}
	want := map[string]string{"claude": "Bearer ${AIRLOCK_TOKEN}", "cursor": "Bearer ${env:AIRLOCK_TOKEN}", "vscode": "Bearer ${input:airlock-token}"}
	for client, header := range want {
		r := airlock(t, "", "gateway", "snippet", client, "--env", "--config", cfg)
		if r.code != 0 || strings.Contains(r.stdout+r.stderr, token) || !strings.Contains(r.stdout, header) || !strings.Contains(r.stdout, `eval "$(airlock gateway token --export --config '`) {
			t.Errorf("%s --env: exit %d\n%s%s", client, r.code, r.stdout, r.stderr)
		}
		var block map[string]any
		js := r.stdout[strings.Index(r.stdout, "\n{")+1:]
		js = js[:strings.Index(js, "\n}")+2]
		if err := json.Unmarshal([]byte(js), &block); err != nil {
			t.Errorf("%s: the block is not JSON: %v\n%s", client, err, js)
		}
	}
	r = airlock(t, "", "gateway", "rotate-token", "--config", cfg)
	tok2, _ := os.ReadFile(filepath.Join(state, "gateway.token"))
	if r.code != 0 || strings.TrimSpace(string(tok2)) == token || strings.Contains(r.stdout, strings.TrimSpace(string(tok2))) {
		t.Errorf("rotate-token: exit %d\n%s", r.code, r.stdout)
	}
	if r := airlock(t, "", "gateway", "token"); r.code != 2 {
		t.Errorf("gateway token without --export: exit %d", r.code)
	}
}

// A CI runner has no credentials: a config that reads one with ${VAR} still checks
// against a snapshot (nothing connects), while a live check still refuses it.
func TestCheckSnapshot_NeedsNoCredentials(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "snap.json")
	if r := snapshotExample(t, snap); r.code != 0 {
		t.Fatalf("snapshot: %d %s", r.code, r.stderr)
	}
	src, _ := os.ReadFile(ciConfig(t, dir))
	withSecret := strings.Replace(string(src), "[servers.web]\n", "[servers.web]\nenv = { WEB_TOKEN = \"${AIRLOCK_TEST_UNSET_TOKEN_18}\" }\n", 1)
	cfg := filepath.Join(dir, "secret.toml")
	if err := os.WriteFile(cfg, []byte(withSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := airlock(t, "", "check", "--config", cfg, "--snapshot", snap, "--format", "json"); r.code != 0 {
		t.Fatalf("check --snapshot with an unset ${VAR}: exit %d\n%s", r.code, r.stderr)
	}
	if r := airlock(t, "", "check", "--config", cfg, "--format", "json"); r.code != 1 || !strings.Contains(r.stderr, "AIRLOCK_TEST_UNSET_TOKEN_18") {
		t.Errorf("live check with an unset ${VAR}: exit %d\n%s", r.code, r.stderr)
	}
}

// A baseline taken while mail__send_email of the untrusted mail server asked does not
// accept the same hazards once a pull request auto-allows it: they are unguarded now,
// --fail-on fails and the report says what changed since the baseline.
func TestCheckBaseline_AutoAllowedSendEmailFails(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "airlock-snapshot.json")
	if r := snapshotExample(t, snap); r.code != 0 {
		t.Fatalf("snapshot: exit %d\n%s", r.code, r.stderr)
	}
	cfg := ciConfig(t, dir)
	r := airlock(t, "", "check", "--config", cfg, "--snapshot", snap, "--format", "json")
	if r.code != 0 {
		t.Fatalf("check: exit %d\n%s", r.code, r.stderr)
	}
	base := filepath.Join(dir, "baseline.json")
	if err := os.WriteFile(base, []byte(r.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	// The pull request.
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\n[servers.mail.tools.send_email]\npolicy = \"allow\"\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()

	r = airlock(t, "", "check", "--config", cfg, "--snapshot", snap, "--baseline", base, "--fail-on", "unguarded:any")
	if r.code != 4 {
		t.Errorf("send_email auto-allowed after the baseline: exit %d, want 4\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "changed since the baseline") || strings.Contains(r.stdout, "accepted in the baseline") {
		t.Errorf("the text report does not say the hazards changed since the baseline:\n%s", r.stdout)
	}
	r = airlock(t, "", "check", "--config", cfg, "--snapshot", snap, "--baseline", base, "--fail-on", "any", "--format", "json")
	var got struct {
		Hazards []struct {
			ID             string
			Unguarded      bool
			Baselined      bool
			BaselineChange string `json:"baseline_change"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 4 {
		t.Fatalf("json: exit %d, %v\n%s", r.code, err, r.stderr)
	}
	for _, h := range got.Hazards {
		if h.Unguarded && (h.Baselined || !strings.Contains(h.BaselineChange, "unguarded")) {
			t.Errorf("%s: unguarded now, baselined %v, baseline_change %q", h.ID, h.Baselined, h.BaselineChange)
		}
	}
}
