package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// `airlock call` of a tool whose result does not match its output schema prints the
// error, never the result, and exits 6; a valid result is printed and exits 0.
func TestCall_ResultNotMatchingOutputSchemaExits6(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, fmt.Sprintf("state_dir = %q\n[servers.shop]\ncommand = %q\ntrust = \"trusted\"\nenv = { AIRLOCK_TEST_SERVER = \"structured\" }\n",
		filepath.Join(state, "airlock"), selfPath(t)))
	r := airlock(t, "", "call", "--config", cfg, "shop__quote")
	const want = "airlock: calling shop__quote: the server's result does not match its output schema: price: expected number, got string"
	if r.code != 6 || !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "12") {
		t.Errorf("exit %d, want 6 saying %q and printing no result; stdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
	r = airlock(t, "", "call", "--config", cfg, "shop__good")
	if r.code != 0 || !strings.Contains(r.stdout, `"price": 12.5`) {
		t.Errorf("a valid result: exit %d; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
