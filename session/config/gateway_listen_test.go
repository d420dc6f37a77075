package config_test

import (
	"testing"

	"github.com/airlock-mcp/airlock/session/config"
)

// Only `listen` turns the gateway on: a [gateway] table that sets name_budget or
// allow_remote (for runs with --gateway ADDR), or nothing, leaves it off.
func TestGatewayTableWithoutListenIsOff(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	for _, src := range []string{
		"[gateway]\n",
		"[gateway]\nname_budget = 40\n",
		"[gateway]\nallow_remote = true\n",
	} {
		cfg, err := config.Parse([]byte(src), "x.toml", noEnv)
		if err != nil {
			t.Errorf("%q: %v", src, err)
			continue
		}
		if cfg.Gateway == nil || cfg.Gateway.Listen != "" {
			t.Errorf("%q: gateway %+v, want the table kept and no listen address", src, cfg.Gateway)
		}
	}
	cfg, err := config.Parse([]byte("[gateway]\nlisten = \"127.0.0.1:7878\"\nname_budget = 40\n"), "x.toml", noEnv)
	if err != nil || cfg.Gateway == nil || cfg.Gateway.Listen != "127.0.0.1:7878" || cfg.Gateway.NameBudget != 40 {
		t.Errorf("with listen: %+v, %v", cfg.Gateway, err)
	}
}
