package gateway_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/gateway"
)

// `airlock gateway rotate-token` replaces the token, and a running
// gateway refuses the old one from its next request on (no restart).
func TestGateway_RotatedTokenTakesEffectWithoutRestart(t *testing.T) {
	dir := t.TempDir()
	old, err := gateway.LoadOrCreateToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	g, err := gateway.New(m, gateway.Options{Listen: "127.0.0.1:0", Token: old, TokenFile: gateway.TokenPath(dir)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	status := func(token string) int {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
		req, _ := http.NewRequest("POST", g.URL(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(old); got != 200 {
		t.Fatalf("old token before rotation: %d", got)
	}
	fresh, err := gateway.RotateToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fresh == old || len(fresh) != 64 {
		t.Fatalf("rotated token %q", fresh)
	}
	if got := status(old); got != 401 {
		t.Errorf("old token after rotation: %d, want 401", got)
	}
	if got := status(fresh); got != 200 {
		t.Errorf("new token after rotation: %d, want 200", got)
	}
	if st, _ := os.Stat(gateway.TokenPath(dir)); st.Mode().Perm() != 0o600 {
		t.Errorf("token mode %v", st.Mode().Perm())
	}
	// A token file that is cut short or removed accepts nothing, never the old token.
	if err := os.WriteFile(gateway.TokenPath(dir), []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := status(fresh); got != 401 {
		t.Errorf("token file cut short: %d, want 401", got)
	}
	if got := status("short"); got != 401 {
		t.Errorf("a short token accepted: %d", got)
	}
	os.Remove(gateway.TokenPath(dir))
	if got := status(fresh); got != 401 {
		t.Errorf("token file removed: %d, want 401", got)
	}
	// A link put in the token file's place is refused (statefile), never followed.
	other := filepath.Join(t.TempDir(), "planted")
	if err := os.WriteFile(other, []byte(strings.Repeat("a", 64)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, gateway.TokenPath(dir)); err != nil {
		t.Fatal(err)
	}
	if got := status(strings.Repeat("a", 64)); got != 401 {
		t.Errorf("a token file that is a link: %d, want 401", got)
	}
	os.Remove(gateway.TokenPath(dir))
	again, err := gateway.RotateToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := status(again); got != 200 {
		t.Errorf("rotated again: %d, want 200", got)
	}
}
