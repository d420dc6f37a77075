package session_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// policyFile is the name the policies of these tests are read as.
const policyFile = "/etc/airlock/policy.toml"

// withPolicy applies a managed policy's text to cfg.
func withPolicy(t *testing.T, cfg *config.Config, text string) *config.Config {
	t.Helper()
	p, err := config.ParsePolicy([]byte(text), policyFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// policyWeb is a trusted server web with a read-only tool fetch_url that the
// person's config allows, and write_file (a path argument) that it allows too.
func policyWeb(t *testing.T) (*sessiontest.Upstream, *config.Config) {
	web := sessiontest.NewUpstream("web")
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: sessiontest.Hint(false)}
	web.Add("fetch_url", "Fetch a page.", ro)
	web.AddSchema("write_file", "Write a file.", `{"type":"object","properties":{"path":{"type":"string"}}}`, sessiontest.WriteHints())
	s := sessiontest.Inproc("web", trust.Trusted)
	s.Tools = map[string]config.Tool{"fetch_url": {Policy: trust.Allow}, "write_file": {Policy: trust.Allow}}
	cfg := sessiontest.NewConfig(s)
	cfg.ApprovalTimeout = 300 * time.Millisecond
	return web, cfg
}

// A policy denying a tool the person allows: the call is denied, and the caller,
// the audit record and the tool's reasons name the policy's file and line.
func TestPolicy_DenyOutranksUserAllow(t *testing.T) {
	web, cfg := policyWeb(t)
	withPolicy(t, cfg, "# team\n[servers.web.tools.fetch_url]\npolicy = \"deny\"\n")
	log, path := sessiontest.OpenAuditLog(t)
	m := sessiontest.StartUpstreams(t, cfg, session.Options{Audit: log}, map[string]*sessiontest.Upstream{"web": web})
	const src = "policy: /etc/airlock/policy.toml:3"
	err := rateCall(m, "", "fetch_url")
	d := sessiontest.Denied(t, err)
	if !strings.Contains(err.Error(), src) {
		t.Errorf("the caller is told %q, want it to name %q (by %s)", err, src, d.Verdict.By)
	}
	if n := len(web.Calls("fetch_url")); n != 0 {
		t.Errorf("the server got %d calls", n)
	}
	if recs := decisions(t, path, "fetch_url"); len(recs) != 1 || recs[0].Decision != "deny" || !strings.Contains(recs[0].Reason, src) {
		t.Errorf("the decision records: %+v", recs)
	}
	ti := sessiontest.MustTool(t, m, "web", "fetch_url")
	if ti.Class.Action != trust.Deny || !ti.Managed.Holds() || ti.Managed.Source != src {
		t.Errorf("the tool: action %v, hold %+v", ti.Class.Action, ti.Managed)
	}
}

// A policy's untrusted against the person's trusted: the server is untrusted, its
// read-only annotation is not believed (the tier shows it), and the server says the
// policy set it.
func TestPolicy_UntrustedOutranksUserTrusted(t *testing.T) {
	web, cfg := policyWeb(t)
	before := sessiontest.StartUpstreams(t, cfg, session.Options{}, map[string]*sessiontest.Upstream{"web": web})
	trustedTier := sessiontest.MustTool(t, before, "web", "fetch_url").Class.Tier
	before.Close()

	web, cfg = policyWeb(t)
	withPolicy(t, cfg, "[servers.web]\ntrust = \"untrusted\"\n")
	m := sessiontest.StartUpstreams(t, cfg, session.Options{}, map[string]*sessiontest.Upstream{"web": web})
	sv := sessiontest.MustServer(t, m, "web", model.StatusReady)
	if sv.Trust != trust.Untrusted || sv.TrustSource != "policy: /etc/airlock/policy.toml:2" {
		t.Errorf("server trust %v from %q", sv.Trust, sv.TrustSource)
	}
	ti := sessiontest.MustTool(t, m, "web", "fetch_url")
	if trustedTier != trust.TierRead || ti.Class.Tier == trust.TierRead {
		t.Errorf("tier trusted %v, under the policy %v: an untrusted server's read-only hint must not be believed", trustedTier, ti.Class.Tier)
	}
}

// A policy ask rule against the person's more specific allow rule: the call asks,
// naming the policy's rule, and no answer can make it always allowed.
func TestPolicy_AskRuleOutranksUserAllowRule(t *testing.T) {
	web, cfg := policyWeb(t)
	userAllow, err := trust.NewRule("servers.web.tools.write_file.rules[0]", trust.Allow, "", []trust.Cond{mustCond(t, "path", "glob", "/tmp/project/**")})
	if err != nil {
		t.Fatal(err)
	}
	wf := cfg.Servers[0].Tools["write_file"]
	wf.Rules = []trust.Rule{userAllow}
	cfg.Servers[0].Tools["write_file"] = wf
	withPolicy(t, cfg, `[[servers.web.tools.write_file.rules]]
when = { path = { glob = "/tmp/**" } }
policy = "ask"
`)
	m := sessiontest.StartUpstreams(t, cfg, session.Options{}, map[string]*sessiontest.Upstream{"web": web})
	evs := sessiontest.CollectEvents(t, m)
	err = callArgs(m, "write_file", `{"path":"/tmp/project/a.txt"}`)
	if d := sessiontest.Denied(t, err); d.Verdict.By != trust.DecidedByTimeout {
		t.Fatalf("the call ended %v, want asked and timed out", err)
	}
	p := evs.Pending(t, 1)
	if p.Rule == nil || !strings.Contains(p.Rule.Source, "policy /etc/airlock/policy.toml:1") || p.Held == "" {
		t.Errorf("the question: rule %+v, held %q", p.Rule, p.Held)
	}
	// Outside the policy's rule the person's allow rule decides.
	if err := callArgs(m, "write_file", `{"path":"/srv/x"}`); err != nil {
		t.Errorf("a call no policy rule matches: %v", err)
	}
}

func mustCond(t *testing.T, field string, kind trust.MatcherKind, v any) trust.Cond {
	t.Helper()
	c, err := trust.NewCond(field, kind, v, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// callArgs calls web's tool with args in the person's context.
func callArgs(m *session.Manager, tool, args string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := m.Call(ctx, model.CallRequest{Server: "web", Tool: tool, Args: sessiontest.Args(args)})
	return err
}

// A policy policy = "ask" on a tool: it asks; an answer allowing it for the
// context or always allows nothing and makes no grant, so the next call asks again.
func TestPolicy_AskToolRefusesGrants(t *testing.T) {
	web, cfg := policyWeb(t)
	withPolicy(t, cfg, "[servers.web.tools.fetch_url]\npolicy = \"ask\"\n")
	m := sessiontest.StartUpstreams(t, cfg, session.Options{}, map[string]*sessiontest.Upstream{"web": web})
	a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.AllowForContext}, model.Response{Answer: model.AllowOnce})
	err := rateCall(m, "", "fetch_url")
	d := sessiontest.Denied(t, err)
	if !strings.Contains(err.Error(), "cannot be allowed for the context or always") {
		t.Errorf("an allow for the context: %v (by %s)", err, d.Verdict.By)
	}
	if p := <-a.Seen; !strings.Contains(p.Held, "policy: /etc/airlock/policy.toml:2") {
		t.Errorf("the question's Held = %q", p.Held)
	}
	if len(m.Engine().Grants()) != 0 {
		t.Errorf("grants made: %+v", m.Engine().Grants())
	}
	if err := rateCall(m, "", "fetch_url"); err != nil {
		t.Fatalf("the call allowed once: %v", err)
	}
	if len(a.Seen) != 1 {
		t.Errorf("the second call did not ask")
	}
}

// A policy's rate against the person's looser one: the policy's limit applies; a
// policy's calls_per_minute smaller than the person's wins.
func TestPolicy_RateTighter(t *testing.T) {
	web, cfg := rateWeb("", toolRate(config.Rate{N: 100, Per: time.Minute, Action: trust.Ask}))
	cfg.Limits.CallsPerMinute, cfg.Limits.RateAction = 50, trust.Ask
	withPolicy(t, cfg, "[servers.web.tools.fetch_url]\nrate = \"2/min\"\nrate_action = \"deny\"\n[limits]\ncalls_per_minute = 3\n")
	if cfg.Limits.CallsPerMinute != 3 {
		t.Fatalf("calls_per_minute = %d", cfg.Limits.CallsPerMinute)
	}
	m := sessiontest.StartUpstreams(t, cfg, session.Options{}, map[string]*sessiontest.Upstream{"web": web})
	mustRun(t, m, "", "fetch_url", 2)
	err := rateCall(m, "", "fetch_url")
	if d := sessiontest.Denied(t, err); !strings.Contains(strings.Join(d.Verdict.Reasons, "; "), "the 3rd call of web__fetch_url this minute; limit 2/min (policy: /etc/airlock/policy.toml:2)") || d.Verdict.By != trust.DecidedByPolicy {
		t.Errorf("the 3rd call: %v %q", err, d.Verdict.Reasons)
	}
	mustRun(t, m, "", "lookup", 1)
	err = rateCall(m, "", "lookup")
	if d := sessiontest.Denied(t, err); !strings.Contains(err.Error()+strings.Join(d.Verdict.Reasons, "; "), "limit 3/min (policy: /etc/airlock/policy.toml:5)") {
		t.Errorf("the 4th call of the context: %v (by %s)", err, d.Verdict.By)
	}
}

// allowed_servers and denied_servers: a server they do not let run is blocked and
// never started, its error naming the policy; one they allow starts.
func TestPolicy_ServerPatternsBlockAndDoNotStart(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "started")
	sh := config.Server{Name: "shell", Transport: config.TransportStdio, Command: "/bin/sh", Args: []string{"-c", "echo started > " + marker + "; exec sleep 5"},
		ConnectTimeout: 2 * time.Second, CallTimeout: time.Second, Trust: trust.Trusted}
	ok := sessiontest.TestServer(t, "ok", "marker", trust.Trusted)
	denied := sessiontest.TestServer(t, "denied", "marker", trust.Trusted)
	denied.Args = []string{"--evil"}
	cfg := sessiontest.NewConfig(denied, ok, sh)
	self, _ := os.Executable()
	withPolicy(t, cfg, "allowed_servers = ["+sessiontestQuote(self)+", "+sessiontestQuote(self+" --evil")+"]\ndenied_servers = [\"* --evil\"]\n")
	m := sessiontest.Start(t, cfg, session.Options{})
	sessiontest.MustServer(t, m, "ok", model.StatusReady)
	for name, want := range map[string]string{
		"shell":  "match none of allowed_servers (policy: /etc/airlock/policy.toml:1)",
		"denied": `matches denied_servers pattern "* --evil" (policy: /etc/airlock/policy.toml:2)`,
	} {
		sv := sessiontest.MustServer(t, m, name, model.StatusFailed)
		if sv.Trust != trust.BlockedServer || sv.Err == nil || !strings.Contains(sv.Err.Error(), want) || !strings.Contains(sv.Blocked, want) {
			t.Errorf("%s: trust %v, err %v, blocked %q; want %q", name, sv.Trust, sv.Err, sv.Blocked, want)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the blocked shell server was started: %v", err)
	}
	// A what-if cannot unblock it.
	if err := m.SetServerTrust("shell", trust.Trusted); err == nil || !strings.Contains(err.Error(), "policy: /etc/airlock/policy.toml:1") {
		t.Errorf("what-if trusted on a server the policy blocks: %v", err)
	}
}

func sessiontestQuote(s string) string { return sessiontest.JStr(s) }
