package session_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/demo"
	"github.com/airlock-mcp/airlock/trust"
)

// TestHeaders_RedirectToOtherOriginGetsNoAuthorization: a server that answers 307 to
// another origin (another port on 127.0.0.1) must not receive the configured
// Authorization or API-key header; the failure says why and never prints the URL's
// query or userinfo.
func TestHeaders_RedirectToOtherOriginGetsNoAuthorization(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	docs, _ := demo.New("docs")
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return docs }, nil)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		for _, h := range []string{"Authorization", "X-Api-Key"} {
			if v := r.Header.Get(h); v != "" {
				leaked = append(leaked, h+": "+v)
			}
		}
		mu.Unlock()
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(other.Close)
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(first.Close)

	u := strings.Replace(first.URL, "http://", "http://user:pa55word@", 1) + "/mcp?api_key=query-s3cret"
	cfg := sessiontest.NewConfig(config.Server{
		Name: "docs", Transport: config.TransportHTTP, URL: u,
		Headers: map[string]string{"Authorization": "Bearer s3cret", "X-Api-Key": "k3y"},
		Trust:   trust.Trusted, ConnectTimeout: 10 * time.Second,
	})
	m := sessiontest.Start(t, cfg, session.Options{})
	sv := sessiontest.MustServer(t, m, "docs", model.StatusFailed)
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) > 0 {
		t.Errorf("the other origin received configured headers: %q", leaked)
	}
	msg := sv.Err.Error()
	t.Logf("failure: %s", msg)
	if !strings.Contains(msg, "redirect") || !strings.Contains(msg, "origin") {
		t.Errorf("failure does not say a redirect to another origin was refused: %s", msg)
	}
	for _, secret := range []string{"query-s3cret", "pa55word", "s3cret", "k3y"} {
		if strings.Contains(msg, secret) {
			t.Errorf("failure prints %q: %s", secret, msg)
		}
	}
}
