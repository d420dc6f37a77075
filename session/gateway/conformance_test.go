package gateway_test

import (
	"context"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/conformancesuite"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
)

// The conformance suite's dns-rebinding-protection server scenario against the gateway.
// The scenario is written for servers without authentication and cannot send a bearer
// token, so it talks to the gateway through a reverse proxy on 127.0.0.1 that adds the
// token and passes Host and Origin through untouched: the gateway's own Host/Origin
// checks are what the scenario exercises.
func TestGatewayConformanceDNSRebinding(t *testing.T) {
	node, script := conformancesuite.Locate(t)
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	g := startGateway(t, m)
	target, _ := url.Parse(g.URL())
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
		r.Out.Host = r.In.Host // keep what the scenario sent
		r.Out.Header.Set("Authorization", "Bearer "+testToken)
	}}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := t.TempDir()
	cmd := exec.CommandContext(ctx, node, script, "server", "--url", front.URL+"/mcp", "--scenario", "dns-rebinding-protection", "-o", out)
	b, err := cmd.CombinedOutput()
	t.Logf("conformance output:\n%s", b)
	if err != nil {
		t.Fatalf("dns-rebinding-protection failed: %v", err)
	}
	if !strings.Contains(string(b), "Passed") && !strings.Contains(string(b), "passed") {
		t.Errorf("no pass reported")
	}
}
