package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// teamPolicy writes a policy file in a folder of its own (root's when the tests
// run as root, which the owner check wants) and returns its path.
func teamPolicy(t *testing.T, text string) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("the policy's owner check wants a root-owned file: run as root")
	}
	dir := filepath.Join(t.TempDir(), "airlock")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "policy.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// airlockPolicy runs airlock with AIRLOCK_POLICY naming policy.
func airlockPolicy(t *testing.T, policy string, args ...string) result {
	t.Helper()
	cmd := asAirlock(t, []string{"AIRLOCK_POLICY"}, append(stateEnv(t.TempDir()), "AIRLOCK_POLICY="+policy), args...)
	cmd.Stdin = strings.NewReader("")
	return runResult(t, cmd)
}

// allow_yes_flag = false: `airlock call --yes` is refused, exit 2, naming the
// policy file and line; without --yes the call is still asked (denied here: no
// terminal).
func TestPolicy_YesFlagRefused(t *testing.T) {
	pol := teamPolicy(t, "# team\nallow_yes_flag = false\n")
	r := airlockPolicy(t, pol, "call", "mail", "send_email", "--yes", "--config", exampleConfig, "--args", `{"to":"a@example.com","subject":"s","body":"b"}`)
	want := "the team policy says allow_yes_flag = false (policy: " + pol + ":2)"
	if r.code != 2 || !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "queued message") {
		t.Errorf("--yes under the policy: exit %d\n%s%s\nwant %q", r.code, r.stdout, r.stderr, want)
	}
}

// A policy file that cannot be trusted stops every command before anything runs,
// and AIRLOCK_POLICY naming a file that is not there is refused, never read as
// no policy.
func TestPolicy_UntrustedFileRefusesToStart(t *testing.T) {
	pol := teamPolicy(t, "[policy]\nwrite = \"deny\"\n")
	if err := os.Chmod(pol, 0o666); err != nil {
		t.Fatal(err)
	}
	r := airlockPolicy(t, pol, "check", "--config", exampleConfig)
	want := "policy " + pol + " is writable by others (mode 0666); airlock will not start"
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("a world-writable policy: exit %d\n%s\nwant %q", r.code, r.stderr, want)
	}
	r = airlockPolicy(t, pol, "demo", "--no-tui")
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("the demo under a world-writable policy: exit %d\n%s", r.code, r.stderr)
	}
	missing := filepath.Join(t.TempDir(), "policy.toml")
	r = airlockPolicy(t, missing, "check", "--config", exampleConfig)
	if r.code != 1 || !strings.Contains(r.stderr, "does not exist (AIRLOCK_POLICY names it); airlock will not start") {
		t.Errorf("a missing named policy: exit %d\n%s", r.code, r.stderr)
	}
}

// check shows what the policy set and where: the text's trust and tool lines, and
// --json's trust_source, policy_source and policy object.
func TestPolicy_CheckShowsSources(t *testing.T) {
	pol := teamPolicy(t, `[servers.docs]
trust = "untrusted"

[servers.notes.tools.delete_note]
policy = "deny"
`)
	r := airlockPolicy(t, pol, "check", "--config", exampleConfig)
	for _, want := range []string{
		"docs: trust untrusted (policy: " + pol + ":2)",
		"notes__delete_note: policy deny (policy: " + pol + ":5)",
		"team policy: " + pol,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check text lacks %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}
	r = airlockPolicy(t, pol, "check", "--json", "--config", exampleConfig)
	var rep struct {
		Servers []struct {
			Name, Trust string
			TrustSource string `json:"trust_source"`
		}
		Tools []struct {
			Qualified    string
			Policy       string
			PolicySource string `json:"policy_source"`
		}
		Policy *struct {
			Files []string
			Set   []struct{ Key, Value, Source string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("check --json: %v\n%s", err, r.stdout)
	}
	for _, s := range rep.Servers {
		if s.Name == "docs" && (s.Trust != "untrusted" || s.TrustSource != "policy: "+pol+":2") {
			t.Errorf("docs in JSON: %+v", s)
		}
	}
	found := false
	for _, tl := range rep.Tools {
		if tl.Qualified == "notes__delete_note" {
			found = tl.Policy == "deny" && tl.PolicySource == "policy: "+pol+":5"
		}
	}
	if !found {
		t.Errorf("notes__delete_note in JSON lacks its policy source: %s", r.stdout)
	}
	if rep.Policy == nil || len(rep.Policy.Files) != 1 || rep.Policy.Files[0] != pol || len(rep.Policy.Set) != 2 || rep.Policy.Set[0].Key != "servers.docs.trust" {
		t.Errorf("the policy object: %+v", rep.Policy)
	}
}
