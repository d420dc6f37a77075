package gateway

// The gateway follows the tokens file by its content, not by its stat: a revoke and
// an add within one timestamp tick, written in place, leave the size, the mode, the
// inode and (on a coarse clock) the time as they were.

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

func TestNamedTokens_RefreshSeesSameStatNewContent(t *testing.T) {
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
