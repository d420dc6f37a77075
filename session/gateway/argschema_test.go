package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// allowRule is an allow rule named path (with reason) of one condition: field
// matched by kind against val.
func allowRule(t *testing.T, path, reason, field string, kind trust.MatcherKind, val any) trust.Rule {
	t.Helper()
	c, err := trust.NewCond(field, kind, val, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := trust.NewRule(path, trust.Allow, reason, []trust.Cond{c})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// equals = 1234567890123456789 on an integer field must not allow
// 1234567890123456700 (one float64, two accounts): through the gateway, the call
// is asked (here nobody answers, so it is denied) and the server, which reads the
// integer exactly, closes nothing; the account the rule names closes unasked.
func TestGateway_BigIntegerComparedExactly(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran.txt")
	srv := sessiontest.TestServer(t, "lax", "lax-numbers", trust.Trusted)
	srv.Env["AIRLOCK_TEST_RAN"] = ran
	r := allowRule(t, "servers.lax.tools.close_account.rules[0]", "", "account", trust.MatchEquals, int64(1234567890123456789))
	srv.Tools = map[string]config.Tool{"close_account": {Rules: []trust.Rule{r}}}
	cfg := sessiontest.NewConfig(srv)
	cfg.ApprovalTimeout = 300 * time.Millisecond
	m := sessiontest.Start(t, cfg, session.Options{})
	a := sessiontest.AnswerWith(t, m)
	cs := agent(t, startGateway(t, m), nil)
	ctx := context.Background()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lax__close_account", Arguments: map[string]any{"account": int64(1234567890123456700)}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "denied") {
		t.Fatalf("account 1234567890123456700: %v, %q; want it asked, then denied", err, resultText(res))
	}
	select {
	case <-a.Seen:
	default:
		t.Errorf("account 1234567890123456700 was not asked about")
	}
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("the server ran: %q", b)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "lax__close_account", Arguments: map[string]any{"account": int64(1234567890123456789)}})
	if err != nil || res.IsError {
		t.Fatalf("account 1234567890123456789: %v, %q; want it allowed by the rule", err, resultText(res))
	}
	sessiontest.NoAsk(t, a)
	if b, _ := os.ReadFile(ran); string(b) != "closed 1234567890123456789\n" {
		t.Errorf("the server ran %q", b)
	}
}

// A rule "max = 50" on a number field must never let "99999999" through: the
// gateway's agent call is checked against the tool's input schema before anything
// decides it (the validator `airlock call` uses), refused as a tool error naming the
// field, and audited; the lax server, which would have set the limit to 99999999,
// is never called. A number within the rule still runs unasked.
func TestGateway_ArgumentsCheckedAgainstSchemaBeforeAnyDecision(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran.txt")
	logPath := filepath.Join(dir, "audit.jsonl")
	log, err := audit.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	srv := sessiontest.TestServer(t, "lax", "lax-numbers", trust.Trusted)
	srv.Env["AIRLOCK_TEST_RAN"] = ran
	r := allowRule(t, "servers.lax.tools.set_limit.rules[0]", "small limits", "n", trust.MatchMax, int64(50))
	r.Source = "config.toml:9"
	srv.Tools = map[string]config.Tool{"set_limit": {Rules: []trust.Rule{r}}}
	m := sessiontest.Start(t, sessiontest.NewConfig(srv), session.Options{Audit: log})
	a := sessiontest.AnswerWith(t, m) // nobody may be asked
	g := startGateway(t, m)
	cs := agent(t, g, nil)
	ctx := context.Background()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lax__set_limit", Arguments: map[string]any{"n": "99999999"}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), `field "n"`) || !strings.Contains(resultText(res), "input schema") {
		t.Fatalf(`{"n":"99999999"}: %v, result %q; want a tool error naming field "n"`, err, resultText(res))
	}
	sessiontest.NoAsk(t, a)
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("the server ran the call: %q", b)
	}
	// an agent of another kind (through the Manager, not the gateway) meets it too
	_, err = m.Call(ctx, model.CallRequest{Context: "agent-other", Server: "lax", Tool: "set_limit", Args: json.RawMessage(`{"n":"99999999"}`)})
	if !errors.Is(err, session.ErrArgsSchema) || !strings.Contains(err.Error(), `field "n"`) {
		t.Errorf("an agent's call through the Manager: %v, want ErrArgsSchema naming the field", err)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "lax__set_limit", Arguments: map[string]any{"n": 7}})
	if err != nil || res.IsError {
		t.Fatalf(`{"n":7}: %v, %q; want it allowed by the rule`, err, resultText(res))
	}
	if b, _ := os.ReadFile(ran); string(b) != "7\n" {
		t.Errorf("the server ran %q, want only 7", b)
	}

	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var rec audit.Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Kind == "decision" && rec.Decision == "deny" && strings.Contains(rec.Reason, `field "n"`) {
			refused++
			if rec.Tool != "set_limit" || rec.DecidedBy != string(trust.DecidedByPolicy) {
				t.Errorf("refusal record %+v", rec)
			}
		}
	}
	if refused != 2 {
		t.Errorf("%d refusals naming the field audited, want 2:\n%s", refused, b)
	}
}

// A number beyond float64 ({"n":1e400}) from an agent is refused before any
// decision with a sentence that names the field and says why, not "the arguments
// must be a JSON object"; the server is never called.
func TestGateway_NumberBeyondFloatNamesTheField(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran.txt")
	srv := sessiontest.TestServer(t, "lax", "lax-numbers", trust.Trusted)
	srv.Env["AIRLOCK_TEST_RAN"] = ran
	m := sessiontest.Start(t, sessiontest.NewConfig(srv), session.Options{})
	a := sessiontest.AnswerWith(t, m)
	cs := agent(t, startGateway(t, m), nil)
	for _, args := range []string{`{"n":1e400}`, `{"n":-1` + strings.Repeat("0", 400) + `}`} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "lax__set_limit", Arguments: json.RawMessage(args)})
		if err != nil || !res.IsError || !strings.Contains(resultText(res), `field "n": the number `) ||
			!strings.Contains(resultText(res), "cannot be read exactly") || strings.Contains(resultText(res), "JSON object") {
			t.Errorf("%.20s: %v, result %q; want a tool error naming field \"n\" and why", args, err, resultText(res))
		}
	}
	sessiontest.NoAsk(t, a)
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("the server ran the call: %q", b)
	}
}
