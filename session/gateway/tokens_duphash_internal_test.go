package gateway

// A tokens file that lists one hash under two names is refused as damaged: the
// token would authenticate as one of them, depending on the order.

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

func TestParseTokens_SameHashTwiceRefused(t *testing.T) {
	dir := t.TempDir()
	tok := "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	sum := sha256.Sum256([]byte(tok))
	h := hex.EncodeToString(sum[:])
	doc := `{"version":1,"tokens":[{"name":"alice","sha256":"` + h + `","created":"2026-01-01T00:00:00Z"},{"name":"bob","sha256":"` + h + `","created":"2026-01-01T00:00:00Z"}]}`
	p := filepath.Join(dir, "gateway-tokens.json")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	n := newNamedTokens(p)
	n.refresh()
	if n.Problem() == nil {
		name, _ := n.lookup([]byte(tok))
		t.Errorf("a tokens file with one hash under two names was accepted (the token authenticates as %q)", name)
	}
}
