package session_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/conn"
	"github.com/airlock-mcp/airlock/trust"
)

// TestEnv_UntrustedServerSeesNoCanary starts a real stdio server that dumps its
// environment: a secret in airlock's own environment must not reach it, a name the
// person passes with inherit_env must, and so must the configured env.
func TestEnv_UntrustedServerSeesNoCanary(t *testing.T) {
	t.Setenv("AIRLOCK_CANARY_SECRET", "canary-7f3a")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "canary-aws")
	t.Setenv("AIRLOCK_PASSED", "passed-by-name")
	t.Setenv("LC_TEST_LOCALE", "C.UTF-8")
	s := sessiontest.TestServer(t, "envdump", "envdump", trust.Untrusted)
	s.InheritEnv = []string{"AIRLOCK_PASSED"}
	m := sessiontest.Start(t, sessiontest.NewConfig(s), session.Options{})
	sessiontest.AnswerWith(t, m, model.Response{Answer: model.AllowOnce})
	out, err := m.Call(context.Background(), model.CallRequest{Server: "envdump", Tool: "env"})
	if err != nil {
		t.Fatal(err)
	}
	env := sessiontest.TextOf(out.Result)
	vars := map[string]string{}
	for _, line := range strings.Split(env, "\n") {
		k, v, _ := strings.Cut(line, "=")
		vars[k] = v
	}
	for _, canary := range []string{"AIRLOCK_CANARY_SECRET", "AWS_SECRET_ACCESS_KEY"} {
		if _, ok := vars[canary]; ok {
			t.Errorf("the server received %s from airlock's environment", canary)
		}
	}
	if strings.Contains(env, "canary-") {
		t.Errorf("a canary value reached the server:\n%s", env)
	}
	if vars["AIRLOCK_PASSED"] != "passed-by-name" {
		t.Errorf("inherit_env name AIRLOCK_PASSED = %q, want it passed", vars["AIRLOCK_PASSED"])
	}
	if vars["AIRLOCK_TEST_SERVER"] != "envdump" {
		t.Errorf("configured env missing: AIRLOCK_TEST_SERVER = %q", vars["AIRLOCK_TEST_SERVER"])
	}
	if _, ok := vars["PATH"]; !ok {
		t.Errorf("base variable PATH missing")
	}
	if vars["LC_TEST_LOCALE"] != "C.UTF-8" {
		t.Errorf("LC_* variables are part of the base set; LC_TEST_LOCALE = %q", vars["LC_TEST_LOCALE"])
	}
	names := conn.EnvNames(s)
	for _, want := range []string{"AIRLOCK_PASSED", "AIRLOCK_TEST_SERVER", "PATH", "LC_TEST_LOCALE"} {
		if !slices.Contains(names, want) {
			t.Errorf("EnvNames = %v, missing %s", names, want)
		}
	}
	if slices.Contains(names, "AIRLOCK_CANARY_SECRET") {
		t.Errorf("EnvNames lists a variable the server does not get: %v", names)
	}
}
