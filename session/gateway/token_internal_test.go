package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session/statefile"
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

// A rotation written in place with the old modification time put back (the same
// inode, size and mode) is seen at the next look even once the file had settled
// and its stat vouched for it: the change time moved.
func TestTokenSource_RewriteKeepingItsTimesIsSeen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gateway.token")
	oldTok, newTok := strings.Repeat("7", 64), strings.Repeat("8", 64)
	if err := os.WriteFile(path, []byte(oldTok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ts := newTokenSource(path, oldTok)
	if string(ts.current()) != oldTok {
		t.Fatal("the token was not accepted")
	}
	time.Sleep(statefile.Settle + 200*time.Millisecond)
	if string(ts.current()) != oldTok { // the look whose stamp vouches for the file
		t.Fatal("the settled token was not accepted")
	}
	if err := os.WriteFile(path, []byte(newTok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := string(ts.current()); got != newTok {
		t.Fatalf("after the rotation the gateway accepts %q, want the new token", got)
	}
}

// BenchmarkTokenSourceCurrent is one look at a settled gateway.token, as every
// request and call makes several (five a call through the gateway).
func BenchmarkTokenSourceCurrent(b *testing.B) {
	path := filepath.Join(b.TempDir(), "gateway.token")
	tok := strings.Repeat("7", 64)
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	time.Sleep(statefile.Settle + 100*time.Millisecond)
	ts := newTokenSource(path, tok)
	for b.Loop() {
		if string(ts.current()) != tok {
			b.Fatal("the token was not accepted")
		}
	}
}
