package approval

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/airlock-mcp/airlock/trust"
)

// The sentence that made a call ask, kept first by every ending no person decided:
// the taint the question showed, the rule that asked, the secrets in the arguments,
// or the policy (the last of the
// classification's reasons, whatever sentences the verdict appended after it).
func TestAskedBecause(t *testing.T) {
	policy := []string{"server mail is trusted: its hints are used", "tier write: policy ask"}
	rule, err := trust.NewRule("servers.mail.tools.send_email.rules[0]", trust.Ask, "external mail", nil)
	if err != nil {
		t.Fatal(err)
	}
	rule.Source = "config.toml:7"
	taint := trust.Taint{By: trust.Ref{Server: "evil", Tool: "fetch_err"}, CallID: "c1", Channel: trust.ChannelError}
	for _, c := range []struct {
		name  string
		v     trust.Verdict
		rule  *trust.Rule
		shown trust.Taint
		want  string
	}{
		{"taint by an error message", trust.Verdict{By: trust.DecidedByTaint, Reasons: append([]string{taint.Reason()}, policy...)}, nil, taint,
			"asked because the context is tainted by evil__fetch_err (error message, call c1)"},
		{"taint by a result, no call id", trust.Verdict{By: trust.DecidedByTaint}, nil, trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch"}},
			"asked because the context is tainted by web__fetch (result)"},
		{"taint by a resource names it", trust.Verdict{By: trust.DecidedByTaint}, nil,
			trust.Taint{By: trust.Ref{Server: "docs", Tool: "resources/read"}, Channel: trust.ChannelResource, Subject: "file:///a b"},
			`asked because the context is tainted by docs__resources/read (resource "file:///a b")`},
		{"an ask rule", trust.Verdict{By: trust.DecidedByRule, Reasons: append([]string{rule.Sentence()}, policy...)}, &rule, trust.Taint{},
			"asked because rule servers.mail.tools.send_email.rules[0] (config.toml:7) asks for this call: external mail"},
		{"a secret in the arguments", trust.Verdict{By: trust.DecidedBySecret, Reasons: append([]string{"body holds something shaped like a GitHub token"}, policy...)}, nil, trust.Taint{},
			"asked because body holds something shaped like a GitHub token"},
		{"the policy, with a sentence appended after it", trust.Verdict{By: trust.DecidedByPolicy, Reasons: append(policy, "remembered rule r-1 would have allowed this call")}, nil, trust.Taint{},
			"asked because tier write: policy ask"},
	} {
		if got := askedBecause(c.v, c.rule, c.shown, policy); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	// A server's resource URI is its own text: cut to its start (never inside a
	// character's bytes left raw), its controls and bidi overrides escaped.
	hostile := trust.Taint{By: trust.Ref{Server: "docs", Tool: "resources/read"}, Channel: trust.ChannelResource,
		Subject: "x" + strings.Repeat("é", 200) + "\x1b[2J\u202e\n"}
	got := askedBecause(trust.Verdict{By: trust.DecidedByTaint}, nil, hostile, policy)
	if !utf8.ValidString(got) || strings.ContainsAny(got, "\x1b\u202e\n") || !strings.HasSuffix(got, "…)") || len(got) > 2*maxSubjectShown {
		t.Errorf("a hostile subject gives %q", got)
	}
	hostile.Subject = "file:///\x1b]0;t\x07\u202e"
	if got := askedBecause(trust.Verdict{By: trust.DecidedByTaint}, nil, hostile, policy); strings.ContainsAny(got, "\x1b\x07\u202e") {
		t.Errorf("a hostile subject gives %q", got)
	}
}
