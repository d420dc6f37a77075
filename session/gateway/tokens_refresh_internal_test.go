package gateway

// The gateway reads the tokens file again whenever its stat cannot vouch that it is
// unchanged: a revoke and an add within one timestamp tick, written in place, leave
// the size, the mode, the inode and (on a coarse clock) the time as they were, and a
// rewrite can put the old modification time back. Only the change time, which no
// program sets, and a file that settled before the last look (statefile.Stamp) let
// the stat stand for the content.

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session/statefile"
)

func TestNamedTokens_RefreshSeesSameStatNewContent(t *testing.T) {
	for _, settled := range []bool{false, true} {
		t.Run(map[bool]string{false: "just written", true: "settled"}[settled], func(t *testing.T) {
			t.Parallel()
			refreshSeesSameStatNewContent(t, settled)
		})
	}
}

func refreshSeesSameStatNewContent(t *testing.T, settled bool) {
	dir := t.TempDir()
	p := filepath.Join(dir, "gateway-tokens.json")
	doc := func(tok string) []byte {
		sum := sha256.Sum256([]byte(tok))
		return []byte(`{"version":1,"tokens":[{"name":"ci-bot","sha256":"` + hex.EncodeToString(sum[:]) + `","created":"2026-01-01T00:00:00Z"}]}`)
	}
	oldTok := "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	newTok := "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
	if err := os.WriteFile(p, doc(oldTok), 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	n := newNamedTokens(p)
	n.refresh()
	if _, ok := n.lookup([]byte(oldTok)); !ok {
		t.Fatalf("the token in the file is not accepted: %v", n.Problem())
	}
	if settled {
		// The file's times are now older than statefile.Settle: the stamp of the
		// next look vouches for it, and the refresh after it reads nothing.
		time.Sleep(statefile.Settle + 200*time.Millisecond)
		if n.refresh() {
			t.Fatal("an untouched file was reported changed")
		}
		if _, ok := n.lookup([]byte(oldTok)); !ok {
			t.Fatal("the token is no longer accepted though the file did not change")
		}
	}
	// Rewritten in place (same inode, same size), its time put back.
	if err := os.WriteFile(p, doc(newTok), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if !n.refresh() {
		t.Errorf("refresh reported no change though the file's content changed")
	}
	if _, ok := n.lookup([]byte(oldTok)); ok {
		t.Errorf("the replaced token is still accepted")
	}
	if _, ok := n.lookup([]byte(newTok)); !ok {
		t.Errorf("the new token is not accepted")
	}
}
