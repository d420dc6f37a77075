package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The gateway follows its token file's permissions, not only its content: a token
// made readable by others stops being accepted, and the chmod 600 the refusal asks
// for brings it back without a restart.
func TestTokenSource_FollowsAChmod(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gateway.token")
	tok := strings.Repeat("7", 64)
	if err := os.WriteFile(path, []byte(tok), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := newTokenSource(path, tok)
	if string(ts.current()) != tok {
		t.Fatal("the token was not accepted")
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if ts.current() != nil {
		t.Error("a token others may read is still accepted")
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if string(ts.current()) != tok {
		t.Error("after chmod 600 the token is still refused")
	}
}

// A token file cut short (still 40 hex digits, which a length-only check took) or
// garbled accepts no token, neither the cut one nor the one before.
func TestTokenSource_CutOrGarbledAcceptsNone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gateway.token")
	tok := strings.Repeat("7", 64)
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := newTokenSource(path, tok)
	if string(ts.current()) != tok {
		t.Fatal("the token was not accepted")
	}
	for _, bad := range []string{tok[:40] + "\n", tok[:30] + "\x1b[2J" + tok[34:] + "\n", tok + "7\n"} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := ts.current(); got != nil {
			t.Errorf("token file %q: accepted %q", bad, got)
		}
	}
}
