package dialog

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/secrets"
	"github.com/airlock-mcp/airlock/trust"
)

const ghToken = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"

// secretPending is a call to a tool that can carry data out whose body holds a
// GitHub token: the policy would allow it, the secret made it ask, as the engine
// builds such a question.
func secretPending() *model.Pending {
	tool := writeTool()
	tool.Ref = trust.Ref{Server: "mail", Tool: "send"}
	tool.Class.Legs = []trust.Leg{trust.LegExfiltration}
	tool.Class.Action = trust.Allow
	args := `{"body":"here is my key ` + ghToken + `","to":"bob@example.com"}`
	p := pending(tool, args)
	found := secrets.Find(json.RawMessage(args), nil)
	for _, f := range found {
		p.Secrets = append(p.Secrets, model.SecretFinding{Path: f.Path, Sentence: f.Sentence()})
	}
	p.ArgsMasked = secrets.Mask(json.RawMessage(args), nil)
	p.Verdict = trust.Verdict{Action: trust.Ask, By: trust.DecidedBySecret, Reasons: append([]string{secrets.Sentence(found)}, tool.Class.Reasons...)}
	return p
}

// The question shows the secret masked, says where it is and how to show it; the
// reveal key shows it as sent and masks it again.
func TestConfirm_SecretsMaskedUntilRevealed(t *testing.T) {
	c := NewConfirm(secretPending(), plain(), testRules)
	v := text(c.View())
	if strings.Contains(v, ghToken) || !strings.Contains(v, "ghp_…(40 chars)") || !strings.Contains(flat(c.View()), "secrets masked in body (m: show them as sent)") {
		t.Fatalf("the secret is not masked:\n%s", v)
	}
	if !strings.Contains(flat(c.View()), "body holds something shaped like a GitHub token") {
		t.Errorf("the question does not say why it asks:\n%s", v)
	}
	if got := helpKeys(c); !strings.Contains(got, "m show/mask the secrets") {
		t.Errorf("help does not offer the reveal key: %q", got)
	}
	golden(t, filepath.Join("testdata", "confirm_secret_80x24.golden"), v)
	c, a := run(c, press("m"))
	v = text(c.View())
	if a != nil || !strings.Contains(v, ghToken) || !strings.Contains(flat(c.View()), "secrets shown as sent in body (m: mask them)") {
		t.Fatalf("m did not reveal the secret (action %#v):\n%s", a, v)
	}
	golden(t, filepath.Join("testdata", "confirm_secret_revealed_80x24.golden"), v)
	if c, _ = run(c, press("m")); strings.Contains(text(c.View()), ghToken) {
		t.Errorf("m again did not mask the secret:\n%s", text(c.View()))
	}
}

// The reveal key is a display toggle: it answers nothing, moves no focus, and works
// while the guard arms without arming anything; no "Always allow…" is offered, as
// no allow rule covers a call that holds a secret.
func TestConfirm_RevealAnswersNothing(t *testing.T) {
	c := NewConfirm(secretPending(), plain(), testRules)
	if c.OffersAlwaysAllow() {
		t.Error("a call that holds a secret offers Always allow…")
	}
	if _, a := run(c, keys("m", "m", "m")...); a != nil {
		t.Errorf("m answered %#v", a)
	}
	if _, a := run(c, keys("m", "enter")...); a != (DenyCall{ID: 7}) {
		t.Errorf("m, enter gave %#v, want a denial (focus stays on Deny)", a)
	}
	c.SetArming(true)
	c, a := run(c, keys("m")...)
	if a != nil || !strings.Contains(text(c.View()), ghToken) {
		t.Errorf("m while arming: action %#v, revealed %v", a, strings.Contains(text(c.View()), ghToken))
	}
	// Armed for an allow, m is any other key: it goes back to Deny.
	c.SetArming(false)
	if _, a := run(c, keys("right", "enter", "m", "enter")...); a != (DenyCall{ID: 7}) {
		t.Errorf("right, enter, m, enter gave %#v, want a denial", a)
	}
	// Without a secret there is nothing to reveal.
	plainCall := NewConfirm(pending(writeTool(), `{"title":"a"}`), plain(), testRules)
	if got := helpKeys(plainCall); strings.Contains(got, "show/mask") {
		t.Errorf("help offers the reveal key without a secret: %q", got)
	}
}

// "Always deny…" on a call whose body holds the value of an env variable airlock
// passes to a server (a secret known by its value, which no shape finds) proposes
// the rule without a condition on body, and says why; the editor never shows it.
func TestConfirm_RuleEditorLeavesAKnownSecretOpen(t *testing.T) {
	tool := writeTool()
	tool.Ref = trust.Ref{Server: "mail", Tool: "send"}
	tool.Class.Legs = []trust.Leg{trust.LegExfiltration}
	const value = "abcd1234efgh"
	args := `{"body":"the key is ` + value + `","to":"bob@example.com"}`
	known := []secrets.Known{{Name: "the value of API_KEY that airlock passes to server vault", Value: value}}
	p := pending(tool, args)
	for _, f := range secrets.Find(json.RawMessage(args), known) {
		p.Secrets = append(p.Secrets, model.SecretFinding{Path: f.Path, Sentence: f.Sentence()})
	}
	p.ArgsMasked = secrets.Mask(json.RawMessage(args), known)
	p.Verdict = trust.Verdict{Action: trust.Ask, By: trust.DecidedBySecret, Reasons: []string{p.Secrets[0].Sentence}}
	c, a := run(NewConfirm(p, plain(), testRules), keys("right", "right", "right", "right", "right", "enter")...)
	screen := flat(c.View())
	if a != nil || strings.Contains(screen, value) || !strings.Contains(screen, `to = { equals = "bob@example.com" }`) {
		t.Fatalf("the editor (action %#v):\n%s", a, text(c.View()))
	}
	if !strings.Contains(screen, "body holds the value of API_KEY that airlock passes to server vault: left open, so that it is not written into rules.toml") {
		t.Errorf("the editor does not say why body is open:\n%s", text(c.View()))
	}
}
