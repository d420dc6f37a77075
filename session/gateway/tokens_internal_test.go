package gateway

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCheckTokenName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"ci-bot", true}, {"a", true}, {"laptop_2", true}, {strings.Repeat("a", 32), true},
		{"", false}, {strings.Repeat("a", 33), false}, {"-lead", false}, {"_lead", false},
		{"Upper", false}, {"has space", false}, {"dot.ted", false}, {"default", false}, {"é", false},
	} {
		if err := CheckTokenName(tc.name); (err == nil) != tc.ok {
			t.Errorf("CheckTokenName(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// parseTokens never reads a file it does not understand as "no tokens".
func TestParseTokens_Refuses(t *testing.T) {
	h := strings.Repeat("ab", 32)
	for name, body := range map[string]string{
		"cut short":     `{"version":1,"tokens":[{"name":"a",`,
		"empty":         ``,
		"version":       `{"version":2,"tokens":[]}`,
		"unknown field": `{"version":1,"tokens":[],"revoked":[]}`,
		"bad name":      `{"version":1,"tokens":[{"name":"A","sha256":"` + h + `"}]}`,
		"twice":         `{"version":1,"tokens":[{"name":"a","sha256":"` + h + `"},{"name":"a","sha256":"` + h + `"}]}`,
		"short hash":    `{"version":1,"tokens":[{"name":"a","sha256":"abc"}]}`,
		"upper hash":    `{"version":1,"tokens":[{"name":"a","sha256":"` + strings.ToUpper(h) + `"}]}`,
		"two values":    `{"version":1,"tokens":[]}{}`,
	} {
		if _, err := parseTokens("f", []byte(body)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if ts, err := parseTokens("f", []byte(`{"version":1,"tokens":[{"name":"a","sha256":"`+h+`","created":"2026-01-02T03:04:05Z"}]}`)); err != nil || len(ts) != 1 {
		t.Errorf("a good file: %v %v", ts, err)
	}
}

func TestAddListRevoke(t *testing.T) {
	dir := t.TempDir()
	tok, err := AddToken(dir, "ci-bot", time.Unix(1e9, 0))
	if err != nil || len(tok) != 64 {
		t.Fatalf("AddToken = %q, %v", tok, err)
	}
	if _, err := AddToken(dir, "ci-bot", time.Now()); !errors.Is(err, ErrTokenExists) {
		t.Errorf("adding a name twice: %v", err)
	}
	ts, err := ListTokens(dir)
	if err != nil || len(ts) != 1 || ts[0].Name != "ci-bot" || !ts[0].Created.Equal(time.Unix(1e9, 0)) {
		t.Fatalf("ListTokens = %+v, %v", ts, err)
	}
	n := newNamedTokens(TokensPath(dir))
	n.refresh()
	if name, ok := n.lookup([]byte(tok)); !ok || name != "ci-bot" {
		t.Errorf("lookup = %q %v", name, ok)
	}
	if err := RevokeToken(dir, "ci-bot"); err != nil {
		t.Fatal(err)
	}
	if err := RevokeToken(dir, "ci-bot"); !errors.Is(err, ErrNoSuchToken) {
		t.Errorf("revoking twice: %v", err)
	}
	if !n.refresh() {
		t.Error("the revocation was not seen as a change")
	}
	if _, ok := n.lookup([]byte(tok)); ok {
		t.Error("a revoked token is still accepted")
	}
}

func TestLegacyAgentContext(t *testing.T) {
	for k, want := range map[string]bool{
		"agent-claude-code-3384771f": true, "agent-agent-00000000": true, "agent--0123abcd": true,
		"agent-" + strings.Repeat("a", 24) + "-0123abcd": true,
		"agent-" + strings.Repeat("a", 25) + "-0123abcd": false,
		"agent-x-0123ABCD": false, "agent-x-0123abc": false, "agent-x 0123abcd": false, "agent-a b-0123abcd": false,
		"token:default": false, "you": false, "agent-1": false, "agent-x": false,
	} {
		if got := legacyAgentContext(k); got != want {
			t.Errorf("legacyAgentContext(%q) = %v, want %v", k, got, want)
		}
	}
}
