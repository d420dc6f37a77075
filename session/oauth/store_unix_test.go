//go:build unix

package oauth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The OAuth token store is refused when it is a link or others may read it: the
// lookup fails with the sentence, and no token is read from it.
func TestStore_RefusedWhenALinkOrShared(t *testing.T) {
	planted := `{"version":1,"issuers":{"https://as.example":{"https://mcp.example/":{"client_id":"c","access_token":"stolen"}}}}`
	t.Run("symlink", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(t.TempDir(), "planted.json")
		os.WriteFile(target, []byte(planted), 0o600)
		if err := os.Symlink(target, filepath.Join(dir, StoreFile)); err != nil {
			t.Fatal(err)
		}
		s := NewStore(dir)
		_, g, err := s.lookup("https://mcp.example/", "")
		if err == nil || g != nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("lookup through a link: grant %v, err %v", g, err)
		}
		// Saving neither writes through the link nor replaces it behind the
		// person's back.
		if err := s.save("https://as.example", "https://mcp.example/", &grant{ClientID: "c", AccessToken: "new"}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("save through a link: %v", err)
		}
		if b, _ := os.ReadFile(target); string(b) != planted {
			t.Errorf("the link's target was written: %s", b)
		}
		if fi, err := os.Lstat(filepath.Join(dir, StoreFile)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
		}
	})
	t.Run("shared", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, StoreFile)
		os.WriteFile(p, []byte(planted), 0o600)
		os.Chmod(p, 0o604)
		_, g, err := NewStore(dir).lookup("https://mcp.example/", "")
		if err == nil || g != nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("lookup of a world-readable store: grant %v, err %v", g, err)
		}
	})
}
