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
	tokenSteps(t, cfg,
		tokenStep{"add of a name in use", []string{"add", "ci-bot"}, func(r result) bool {
			return r.code == 1 && strings.Contains(r.stderr, "exists")
		}},
		tokenStep{"add of a bad name", []string{"add", "CI Bot"}, func(r result) bool {
			return r.code == 1 && strings.Contains(r.stderr, "use 1 to 32 of a-z, 0-9, _ and -")
		}})
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
	tokenSteps(t, cfg,
		tokenStep{"list", []string{"list"}, func(r result) bool {
			return r.code == 0 && strings.Contains(r.stdout, "ci-bot") && strings.Contains(r.stdout, "token:laptop") && strings.Contains(r.stdout, "default") && !strings.Contains(r.stdout, tok)
		}},
		tokenStep{"revoke", []string{"revoke", "ci-bot"}, func(r result) bool {
			return r.code == 0 && strings.Contains(r.stdout, "revoked the gateway token ci-bot")
		}},
		tokenStep{"revoke twice", []string{"revoke", "ci-bot"}, func(r result) bool {
			return r.code == 1 && strings.Contains(r.stderr, "no token has that name")
		}},
		tokenStep{"list after revoke", []string{"list"}, func(r result) bool {
			return r.code == 0 && !strings.Contains(r.stdout, "ci-bot") && strings.Contains(r.stdout, "laptop")
		}})
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

// tokenStep is one `airlock gateway token` command, args, and what its result must
// hold (ok); what names it in a failure.
type tokenStep struct {
	what string
	args []string
	ok   func(result) bool
}

// tokenSteps runs each step on the config at cfg in turn and fails the test (going
// on) at each step whose result does not hold.
func tokenSteps(t *testing.T, cfg string, steps ...tokenStep) {
	t.Helper()
	for _, st := range steps {
		r := airlock(t, "", append(append([]string{"gateway", "token"}, st.args...), "--config", cfg)...)
		if !st.ok(r) {
			t.Errorf("%s: exit %d\n%s%s", st.what, r.code, r.stdout, r.stderr)
		}
	}
}
