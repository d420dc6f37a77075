package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// `airlock gateway token add NAME | list | revoke NAME`: the value is printed once
// and kept nowhere (only its SHA-256, in a private file), names are checked, a name
// in use is refused, list shows no value, and add and revoke are audited.
func TestGatewayTokenAddListRevoke(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, "state_dir = \""+state+"\"\n")
	r := airlock(t, "", "gateway", "token", "add", "ci-bot", "--config", cfg)
	tok := strings.TrimSpace(r.stdout)
	if r.code != 0 || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(tok) || !strings.Contains(r.stderr, "shown once") {
		t.Fatalf("add: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "gateway", "token", "add", "ci-bot", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "exists") {
		t.Errorf("add of a name in use: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "gateway", "token", "add", "CI Bot", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "use 1 to 32 of a-z, 0-9, _ and -") {
		t.Errorf("add of a bad name: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "gateway", "token", "add", "laptop", "--export", "--config", cfg)
	if r.code != 0 || !regexp.MustCompile(`^export AIRLOCK_TOKEN='?[0-9a-f]{64}'?\n$`).MatchString(r.stdout) {
		t.Errorf("add --export: exit %d\n%q%s", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(state, "gateway-tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), tok) {
		t.Error("the tokens file holds a token's value")
	}
	if st, err := os.Stat(filepath.Join(state, "gateway-tokens.json")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the tokens file's mode: %v %v", st.Mode(), err)
	}
	r = airlock(t, "", "gateway", "token", "list", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "ci-bot") || !strings.Contains(r.stdout, "token:laptop") || !strings.Contains(r.stdout, "default") || strings.Contains(r.stdout, tok) {
		t.Errorf("list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "gateway", "token", "revoke", "ci-bot", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "revoked the gateway token ci-bot") {
		t.Errorf("revoke: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "gateway", "token", "revoke", "ci-bot", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "no token has that name") {
		t.Errorf("revoke twice: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "gateway", "token", "list", "--config", cfg)
	if r.code != 0 || strings.Contains(r.stdout, "ci-bot") || !strings.Contains(r.stdout, "laptop") {
		t.Errorf("list after revoke: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	log, err := os.ReadFile(filepath.Join(state, "audit.jsonl"))
	if err != nil || !regexp.MustCompile(`"context":"token:ci-bot".*"kind":"token-added"`).Match(log) || !regexp.MustCompile(`"context":"token:ci-bot".*"kind":"token-revoked"`).Match(log) {
		t.Errorf("add and revoke are not audited (%v):\n%s", err, log)
	}
	// A tokens file that cannot be read is said, and never overwritten.
	if err := os.WriteFile(filepath.Join(state, "gateway-tokens.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"list"}, {"add", "other"}, {"revoke", "laptop"}} {
		r = airlock(t, "", append(append([]string{"gateway", "token"}, args...), "--config", cfg)...)
		if r.code != 1 || !strings.Contains(r.stderr, "gateway-tokens.json cannot be read") {
			t.Errorf("%v over a garbled file: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(state, "gateway-tokens.json")); string(b) != "{" {
		t.Errorf("the garbled file was rewritten: %q", b)
	}
}
