//go:build unix

package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The OAuth token store is refused when it is a link or others may read it: the
// lookup fails with the sentence, and no token is read from it.
func TestStateFiles_OAuthStoreRefused(t *testing.T) {
	grant := `{"version":1,"issuers":{"https://as.example":{"https://mcp.example/":{"client_id":"c","access_token":"stolen"}}}}`
	t.Run("symlink", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(t.TempDir(), "planted.json")
		os.WriteFile(target, []byte(grant), 0o600)
		if err := os.Symlink(target, filepath.Join(dir, oauthStoreFile)); err != nil {
			t.Fatal(err)
		}
		_, g, err := newOAuthStore(dir).lookup("https://mcp.example/", "")
		if err == nil || g != nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("lookup through a link: grant %v, err %v", g, err)
		}
	})
	t.Run("shared", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, oauthStoreFile)
		os.WriteFile(p, []byte(grant), 0o600)
		os.Chmod(p, 0o604)
		_, g, err := newOAuthStore(dir).lookup("https://mcp.example/", "")
		if err == nil || g != nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("lookup of a world-readable store: grant %v, err %v", g, err)
		}
	})
}
