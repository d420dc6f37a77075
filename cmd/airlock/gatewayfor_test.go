package main

import (
	"testing"

	"github.com/airlock-mcp/airlock/session/config"
)

// The TUI starts the gateway for --gateway ADDR or [gateway] listen, never for a
// [gateway] table that only says how names are served.
func TestGatewayForStartsOnlyWithAnAddress(t *testing.T) {
	budget, err := config.Parse([]byte("[gateway]\nname_budget = 40\nallow_remote = true\n"), "x.toml", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if g := gatewayFor("", budget); g.listen != "" {
		t.Errorf("[gateway] name_budget alone: the gateway starts at %q", g.listen)
	}
	if g := gatewayFor("0.0.0.0:9", budget); g.listen != "0.0.0.0:9" || !g.allowRemote {
		t.Errorf("--gateway with allow_remote: %+v", g)
	}
	if g := gatewayFor("", &config.Config{Gateway: &config.Gateway{Listen: "127.0.0.1:7878"}}); g.listen != "127.0.0.1:7878" {
		t.Errorf("[gateway] listen: %+v", g)
	}
}
