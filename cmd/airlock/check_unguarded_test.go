package main

import (
	"strings"
	"testing"
)

// With server-everything untrusted, check's hazard names its unguarded members
// (the resources and prompts channels, which run unasked by the read tier) before
// the tools that ask, its summary's example is one of those, and the fix hints
// offer asking on the channels before blocking the server.
func TestCheck_UntrustedEverythingNamesWhatRunsUnasked(t *testing.T) {
	cfg := everythingEvConfig(t, "")
	r := airlock(t, "", "check", "--config", cfg)
	out := r.stdout
	i := strings.Index(out, "untrusted-server")
	if i < 0 {
		t.Fatalf("no untrusted-server hazard:\n%s%s", out, r.stderr)
	}
	hz := out[i:]
	leg := ""
	for _, l := range strings.Split(hz, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "untrusted-content:") {
			leg = l
			break
		}
	}
	if !strings.Contains(leg, ": ev prompts (runs unasked), ev resources (runs unasked), ev__echo,") {
		t.Errorf("the untrusted-content leg does not start with the channels that run unasked:\n%s", leg)
	}
	ask := strings.Index(hz, `resources = "ask"`)
	block := strings.Index(hz, `trust = "blocked"`)
	if ask < 0 || !strings.Contains(hz, `prompts = "ask"`) || block >= 0 && block < ask {
		t.Errorf("fix hints do not offer resources/prompts = \"ask\" before blocking the server:\n%s", hz)
	}
}
