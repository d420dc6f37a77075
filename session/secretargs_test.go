package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

const ghToken = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"

// secretArgs are a mail's arguments whose body holds a GitHub token.
var secretArgs = `{"to":"a@example.com","subject":"s","body":"here is my key ` + ghToken + `"}`

// wantSecretAsk checks that a question asked because of a secret names it, shows the
// arguments masked and never the token in what it says.
func wantSecretAsk(t *testing.T, p *model.Pending, sentence string) {
	t.Helper()
	if p.Verdict.By != trust.DecidedBySecret || len(p.Verdict.Reasons) == 0 || p.Verdict.Reasons[0] != sentence {
		t.Errorf("asked %+v, want by secret with %q first", p.Verdict, sentence)
	}
	if len(p.Secrets) != 1 || p.Secrets[0].Sentence != sentence {
		t.Errorf("the question's secrets are %+v, want %q", p.Secrets, sentence)
	}
	if len(p.ArgsMasked) == 0 || strings.Contains(string(p.ArgsMasked), ghToken) || strings.Contains(string(p.ArgsMasked), "abcd1234efgh") || strings.Contains(string(p.ArgsMasked), "inherited-value-42") {
		t.Errorf("the masked arguments are %s", p.ArgsMasked)
	}
	if strings.Contains(strings.Join(p.Verdict.Reasons, " "), ghToken) {
		t.Errorf("the reasons hold the token: %q", p.Verdict.Reasons)
	}
}

// An allowed send_email (the demo's mail server: the exfiltration leg) whose body
// holds a GitHub token asks, naming the argument and the shape; the audit record
// after the person answers says the person decided, asked because of the secret, and
// holds no token.
func TestSecretArgs_AllowedExfiltrationAsks(t *testing.T) {
	log, path := sessiontest.OpenAuditLog(t)
	m, _ := sessiontest.DemoInProcess(t, session.Options{Audit: log}, setTool("mail", "send_email", config.Tool{Policy: trust.Allow}))
	a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.AllowOnce})
	out, err := m.Call(context.Background(), model.CallRequest{Context: "agent-s", Server: "mail", Tool: "send_email", Args: sessiontest.Args(secretArgs)})
	if err != nil {
		t.Fatal(err)
	}
	const sentence = "body holds something shaped like a GitHub token"
	p := <-a.Seen
	wantSecretAsk(t, p, sentence)
	if !strings.Contains(string(p.ArgsMasked), "ghp_…(40 chars)") {
		t.Errorf("masked arguments %s, want the token shown as ghp_…(40 chars)", p.ArgsMasked)
	}
	if out.Verdict.By != trust.DecidedByPerson {
		t.Errorf("decided by %q, want the person", out.Verdict.By)
	}
	r := decisionOf(t, path, "agent-s", "send_email")
	if r.DecidedBy != string(trust.DecidedByPerson) || !strings.HasPrefix(r.Reason, sentence+"; ") || !strings.HasSuffix(r.Reason, "; allowed once by the person") {
		t.Errorf("the record says %s: %q, want the person, %s first", r.DecidedBy, r.Reason, sentence)
	}
	raw, _ := json.Marshal(r)
	if strings.Contains(string(raw), ghToken) {
		t.Errorf("the audit record holds the token: %s", raw)
	}
}

// secretMail is a Manager on a trusted in-process mail server with two write tools,
// and a vault server whose env holds API_KEY. send is labelled exfiltration (closed
// world, so its results do not taint, and not destructive, so it can be granted for
// a context) and configured as sendCfg; save can carry nothing out and is allowed.
func secretMail(t *testing.T, sendCfg config.Tool, opts session.Options) (*session.Manager, *sessiontest.Upstream) {
	t.Helper()
	mail := sessiontest.NewUpstream("mail")
	mail.Add("send", "Send a message.", sessiontest.WriteHints())
	mail.Add("save", "Save a draft.", sessiontest.WriteHints())
	vault := sessiontest.NewUpstream("vault")
	vault.Add("noop", "Nothing.", sessiontest.WriteHints())
	vcfg := sessiontest.Inproc("vault", trust.Trusted)
	vcfg.Env = map[string]string{"API_KEY": "abcd1234efgh", "SHORT": "tiny", "NODE_ENV": "production", "BANK_PIN": "12345678"}
	vcfg.InheritEnv = []string{"AIRLOCK_TEST_INHERITED", "AIRLOCK_TEST_UNSET"}
	mcfg := sessiontest.Inproc("mail", trust.Trusted)
	sendCfg.Labels = []trust.Leg{trust.LegExfiltration}
	mcfg.Tools = map[string]config.Tool{"send": sendCfg, "save": {Policy: trust.Allow}}
	cfg := sessiontest.NewConfig(mcfg, vcfg)
	return sessiontest.StartUpstreams(t, cfg, opts, map[string]*sessiontest.Upstream{"mail": mail, "vault": vault}), mail
}

// A grant for the context does not bypass the secret check, nor does an allow rule.
func TestSecretArgs_GrantAndAllowRuleStillAsk(t *testing.T) {
	t.Run("grant", func(t *testing.T) {
		m, mail := secretMail(t, config.Tool{}, session.Options{})
		a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.AllowForContext}, model.Response{Answer: model.Deny})
		ctx := context.Background()
		send := func(args string) error {
			_, err := m.Call(ctx, model.CallRequest{Context: "agent-g", Server: "mail", Tool: "send", Args: sessiontest.Args(args)})
			return err
		}
		if err := send(`{"body":"hello"}`); err != nil {
			t.Fatal(err)
		}
		<-a.Seen
		if err := send(`{"body":"hello again"}`); err != nil {
			t.Fatal(err)
		}
		sessiontest.NoAsk(t, a) // the grant allows a clean call
		err := send(`{"body":"` + ghToken + `"}`)
		p := <-a.Seen
		wantSecretAsk(t, p, "body holds something shaped like a GitHub token")
		if !strings.Contains(strings.Join(p.Verdict.Reasons, " "), trust.ReasonGranted) {
			t.Errorf("reasons %q do not say the grant would have allowed it", p.Verdict.Reasons)
		}
		sessiontest.Denied(t, err)
		if n := len(mail.Calls("send")); n != 2 {
			t.Errorf("the server got %d sends, want the two clean ones", n)
		}
	})
	t.Run("allow rule", func(t *testing.T) {
		allow := sessiontest.PathRule(t, "servers.mail.tools.send.rules[0]", trust.Allow, "", map[string][2]any{"to": {trust.MatchEquals, "a@example.com"}})
		m, _ := secretMail(t, config.Tool{Rules: []trust.Rule{allow}}, session.Options{})
		a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.Deny})
		ctx := context.Background()
		if out, err := m.Call(ctx, model.CallRequest{Context: "agent-r", Server: "mail", Tool: "send", Args: sessiontest.Args(`{"to":"a@example.com","body":"hi"}`)}); err != nil || out.Verdict.By != trust.DecidedByRule {
			t.Fatalf("a clean call the rule allows: %v %+v", err, out)
		}
		sessiontest.NoAsk(t, a)
		_, err := m.Call(ctx, model.CallRequest{Context: "agent-r", Server: "mail", Tool: "send", Args: sessiontest.Args(`{"to":"a@example.com","body":"` + ghToken + `"}`)})
		wantSecretAsk(t, <-a.Seen, "body holds something shaped like a GitHub token")
		sessiontest.Denied(t, err)
	})
}

// A value equal to another server's configured env value asks, naming the variable
// and its server, never the value; a value shorter than 8 bytes is not looked for,
// nor one of an ordinary name shorter than 16 bytes;
// a tool that cannot carry data out is never checked; and the last check before
// forwarding gives the same verdict for the same arguments. The value never reaches
// the error or the audit log.
func TestSecretArgs_EnvValuesAndOtherTools(t *testing.T) {
	t.Setenv("AIRLOCK_TEST_INHERITED", "inherited-value-42")
	log, path := sessiontest.OpenAuditLog(t)
	m, mail := secretMail(t, config.Tool{Policy: trust.Allow}, session.Options{Audit: log})
	a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.Deny}, model.Response{Answer: model.Deny})
	ctx := context.Background()
	call := func(tool, args string) (*session.Outcome, error) {
		return m.Call(ctx, model.CallRequest{Context: "agent-e", Server: "mail", Tool: tool, Args: sessiontest.Args(args)})
	}
	_, err := call("send", `{"body":"the key is abcd1234efgh"}`)
	const sentence = "body holds the value of API_KEY that airlock passes to server vault"
	wantSecretAsk(t, <-a.Seen, sentence)
	if d := sessiontest.Denied(t, err); strings.Contains(d.Error(), "abcd1234efgh") {
		t.Errorf("the error holds the value: %v", d)
	}
	// The audit log redacts the value in the arguments too, and its reason names
	// the variable only.
	r := decisionOf(t, path, "agent-e", "send")
	if raw, _ := json.Marshal(r); strings.Contains(string(raw), "abcd1234efgh") || !strings.HasPrefix(r.Reason, sentence+"; ") {
		t.Errorf("the audit record is %s", raw)
	}
	if v, _ := m.Engine().DecideCall("agent-e", sessiontest.MustTool(t, m, "mail", "send"), []byte(`{"body":"the key is abcd1234efgh"}`), false); v.Action != trust.Ask || v.By != trust.DecidedBySecret {
		t.Errorf("deciding the same arguments again: %+v", v)
	}
	// The last look before forwarding does not read them again: the decision did.
	if v, _ := m.Engine().RecheckCall("agent-e", sessiontest.MustTool(t, m, "mail", "send"), []byte(`{"body":"the key is abcd1234efgh"}`), false); v.By == trust.DecidedBySecret {
		t.Errorf("the recheck looked for secrets again: %+v", v)
	}
	_, err = call("send", `{"items":["x","inherited-value-42"]}`)
	wantSecretAsk(t, <-a.Seen, "items[1] holds the value of AIRLOCK_TEST_INHERITED that airlock passes to server vault")
	sessiontest.Denied(t, err)
	if out, err := call("send", `{"body":"tiny"}`); err != nil || out.Verdict.By != trust.DecidedByPolicy {
		t.Errorf("a short env value: %v %+v, want allowed by policy", err, out)
	}
	// A value of an ordinary name shorter than 16 bytes is not looked for.
	if out, err := call("send", `{"body":"deployed to production"}`); err != nil || out.Verdict.By != trust.DecidedByPolicy {
		t.Errorf("NODE_ENV's value: %v %+v, want allowed by policy", err, out)
	}
	sessiontest.NoAsk(t, a)

	// save is a write tool that cannot carry data out: allowed, the same arguments
	// run unasked.
	for _, args := range []string{`{"body":"the key is abcd1234efgh"}`, `{"body":"` + ghToken + `"}`} {
		if out, err := call("save", args); err != nil || out.Verdict.By != trust.DecidedByPolicy {
			t.Errorf("save %s: %v %+v, want allowed by policy", args, err, out)
		}
	}
	sessiontest.NoAsk(t, a)
	if n := len(mail.Calls("send")); n != 2 {
		t.Errorf("the server got %d sends, want the two ordinary values'", n)
	}
}

// The value of an env variable that is all digits, sent as a JSON number, asks as
// in a string, is masked in the question and never reaches the audit log.
func TestSecretArgs_EnvValueSentAsANumber(t *testing.T) {
	// The PIN as written, and spelled as the same value: a server reads each as
	// 12345678 (the last is the same float64) and prints it so.
	for _, pin := range []string{"123456789", "1.2345678e7", "123456780e-1", "0.12345678E+8", "12345677.99999999999",
		"1.23456779999999999999e31", "1.23456779999999999999e-31", "1.23456779e-316"} {
		t.Run(pin, func(t *testing.T) {
			log, path := sessiontest.OpenAuditLog(t)
			m, mail := secretMail(t, config.Tool{Policy: trust.Allow}, session.Options{Audit: log})
			a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.Deny})
			_, err := m.Call(context.Background(), model.CallRequest{Context: "agent-n", Server: "mail", Tool: "send", Args: sessiontest.Args(`{"amount":5,"pin":` + pin + `}`)})
			var p *model.Pending
			select {
			case p = <-a.Seen:
			default:
				t.Fatalf("the call ended (%v) without asking", err)
			}
			wantSecretAsk(t, p, "pin holds the value of BANK_PIN that airlock passes to server vault")
			if masked := string(p.ArgsMasked); strings.Contains(masked, "12345678") || strings.Contains(masked, pin) {
				t.Errorf("the masked arguments %s hold the PIN", masked)
			}
			sessiontest.Denied(t, err)
			r := decisionOf(t, path, "agent-n", "send")
			if raw, _ := json.Marshal(r); strings.Contains(string(raw), "12345678") || strings.Contains(string(raw), pin) || !strings.Contains(string(r.Args), `"amount":5`) {
				t.Errorf("the audit record is %s", raw)
			}
			if n := len(mail.Calls("send")); n != 0 {
				t.Errorf("the server got %d sends, want none", n)
			}
		})
	}
}

// "Always deny…" (and "Always allow…") never writes a secret into rules.toml: the
// proposal leaves an argument holding a secret open and says so, and a rule whose
// conditions hold one — a shape, or the value of an env variable airlock passes to
// a server — is refused before anything is written, the refusal naming the shape,
// not the value; neither the rules file nor the audit log holds it.
func TestSecretArgs_RememberedRuleHoldsNoSecret(t *testing.T) {
	dir := t.TempDir()
	rulesPath := filepath.Join(dir, "rules.toml")
	log, logPath := sessiontest.OpenAuditLog(t)
	m, _ := secretMail(t, config.Tool{}, session.Options{Audit: log, RulesFile: rulesPath})
	tool := sessiontest.MustTool(t, m, "mail", "send")

	p := approval.ProposeRule(tool, []byte(`{"to":"a@example.com","body":"`+ghToken+`"}`))
	if when := approval.FormatWhen(p.When); strings.Contains(when, ghToken) || !strings.Contains(when, "a@example.com") {
		t.Errorf("the proposal is %s, want to kept and body left open", when)
	}
	if notes := strings.Join(p.Notes, " | "); !strings.Contains(notes, "body") || !strings.Contains(notes, "GitHub token") || strings.Contains(notes, ghToken) {
		t.Errorf("the proposal's notes %q do not say body was left open for its secret", p.Notes)
	}

	for _, c := range []struct{ name, value, want string }{
		{"shape", "key " + ghToken, "GitHub token"},
		{"known", "the key is abcd1234efgh", "API_KEY"},
	} {
		for _, policy := range []trust.Action{trust.Deny, trust.Allow} {
			prop := model.RuleProposal{Server: "mail", Tool: "send", When: map[string]map[string]any{"body": {"equals": c.value}}}
			_, err := m.Engine().RememberRule(prop, policy, tool, "test")
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), c.value) {
				t.Errorf("%s %s: RememberRule = %v, want a refusal naming %s without the value", c.name, policy, err, c.want)
			}
		}
	}
	if policy := trust.Deny; approval.CheckProposal(model.RuleProposal{Server: "mail", Tool: "send", When: map[string]map[string]any{"body": {"one_of": []any{"x", ghToken}}}}, policy, tool) == nil {
		t.Error("CheckProposal accepts a one_of holding a GitHub token")
	}
	for _, f := range []string{rulesPath, logPath} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if strings.Contains(string(b), ghToken) || strings.Contains(string(b), "abcd1234efgh") {
			t.Errorf("%s holds the secret:\n%s", filepath.Base(f), b)
		}
	}
}

// BANK_PIN=12345678 sent as 0.(100,000 zeros)1234567799999999999999e100008, which
// Python's json and JavaScript's JSON.parse read as 12345678 (Go's
// strconv.ParseFloat alone reads its exponent as 10000 and the number as 0). A
// ~100 KB argument, under the default limit. The tool is allowed by policy: the
// secret is what makes airlock ask.
func TestSecretArgs_EnvValueSentWithALongExponent(t *testing.T) {
	zeros := strings.Repeat("0", 100_000)
	pin := "0." + zeros + "1234567799999999999999e" + strconv.Itoa(100_000+8)
	log, _ := sessiontest.OpenAuditLog(t)
	m, mail := secretMail(t, config.Tool{Policy: trust.Allow}, session.Options{Audit: log})
	a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.Deny})
	_, err := m.Call(context.Background(), model.CallRequest{Context: "agent-n", Server: "mail", Tool: "send", Args: sessiontest.Args(`{"amount":5,"pin":` + pin + `}`)})
	select {
	case <-a.Seen:
	default:
		t.Errorf("the call ended (%v) without asking", err)
	}
	if n := len(mail.Calls("send")); n != 0 {
		t.Errorf("the server got %d sends holding the PIN, want none", n)
	}
}
