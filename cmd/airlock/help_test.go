package main

import (
	"strings"
	"testing"
)

// airlock help and --help exit 0 and list every command, flag and
// exit code; check --help shows only check's flags; every subcommand has --help.
func TestHelp_EveryCommandFlagAndExitCode(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		r := airlock(t, "", args...)
		if r.code != 0 {
			t.Fatalf("airlock %v: exit %d\n%s", args, r.code, r.stderr)
		}
		for _, want := range []string{"gateway snippet", "bridge", "audit verify", "import", "pins accept", "call SERVER__TOOL",
			"-gateway", "-tour", "-fail-on", "-args", "-sha256", "-demo", "-no-bell", "-no-notify",
			"Exit codes:", "  2  usage", "  4  check --fail-on", "  5  call", "  6  call", "timed out"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("airlock %v lacks %q:\n%s", args, want, r.stdout)
			}
		}
	}
	r := airlock(t, "", "check", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "-fail-on") || !strings.Contains(r.stdout, "-json") {
		t.Fatalf("check --help: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, other := range []string{"-gateway", "-no-tui", "-no-bell", "-no-notify", "-tour", "airlock demo"} {
		if strings.Contains(r.stdout, other) {
			t.Errorf("check --help shows %q, not a check flag:\n%s", other, r.stdout)
		}
	}
	for _, c := range commands {
		if len(c.path) == 0 {
			continue
		}
		args := append(append([]string{}, c.path...), "--help")
		r := airlock(t, "", args...)
		if r.code != 0 || !strings.Contains(r.stdout, c.name()) {
			t.Errorf("airlock %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	if r := airlock(t, "", "nosuch"); r.code != 2 {
		t.Errorf("unknown command: exit %d", r.code)
	}
}

// airlock call SERVER__TOOL works, and arguments are checked
// against the input schema before anything is sent, naming the field.
func TestCall_QualifiedNameAndSchemaChecked(t *testing.T) {
	cfg := exampleConfig
	r := airlock(t, "", "call", "docs__search_docs", "--config", cfg, "--args", `{"query":"trust"}`)
	if r.code != 0 || !strings.Contains(r.stdout, "✓ result:") {
		t.Errorf("call docs__search_docs: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "call", "docs__search_docs", "--config", cfg, "--args", `{"query":42}`)
	if r.code != 2 || !strings.Contains(r.stderr, `field "query"`) {
		t.Errorf("a wrong type: exit %d, want 2 naming the field\n%s", r.code, r.stderr)
	}
	r = airlock(t, "", "call", "mail__send_email", "--yes", "--config", cfg, "--args", `{"to":"a@example.com"}`)
	if r.code != 2 || !strings.Contains(r.stderr, "subject") || strings.Contains(r.stdout, "queued message") {
		t.Errorf("a missing required field: exit %d, want 2 naming it, nothing sent\n%s%s", r.code, r.stdout, r.stderr)
	}
}
