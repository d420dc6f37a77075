package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/screens/activity"
	"github.com/airlock-mcp/airlock/ui/screens/result"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// flat is a rendering without styles and with its whitespace runs as one space.
func flat(s string) string { return strings.Join(strings.Fields(ansi.Strip(s)), " ") }

// Every screen that says how a call was decided says it as the sentence
// (model.DecidedSentence), never as the audit log's value: the Activity list's
// row and full record, and the result view of an allowed, a denied and a
// withdrawn call.
func TestEvidence_ScreensSayTheSentenceNotTheValue(t *testing.T) {
	st := theme.New(true, true)
	for _, tt := range []struct {
		decision string
		by       trust.DecidedBy
	}{
		{"allow", trust.DecidedByTaintThenFlag},
		{"allow", trust.DecidedByFlag},
		{"deny", trust.DecidedByTaintThenPerson},
		{"allow", trust.DecidedByPolicy},
	} {
		want := model.DecisionSentence(tt.decision, string(tt.by))
		call := model.CallFinished{
			CallID: "c2", Server: "mail", Tool: "send_email", Tier: "destructive", Args: []byte(`{}`),
			Decision: tt.decision, DecidedBy: string(tt.by), Reasons: []string{"tier destructive: policy ask"},
			Outcome: "ok", At: time.Now(),
		}
		if tt.decision == "deny" {
			call.Outcome = "denied"
		}
		e := activity.Entry{At: call.At, Call: call}
		for name, got := range map[string]string{
			"activity record": flat(e.RecordContent(&st, 140)),
			"activity row":    flat(e.CallRow(&st, 140)),
		} {
			if !strings.Contains(got, want) {
				t.Errorf("%s of %s by %s lacks %q:\n%s", name, tt.decision, tt.by, want, got)
			}
			if strings.Contains(got, "decided by "+string(tt.by)) || tt.by != trust.DecidedByPolicy && strings.Contains(got, "by "+string(tt.by)) {
				t.Errorf("%s of %s by %s shows the value:\n%s", name, tt.decision, tt.by, got)
			}
		}
	}

	allowed := result.New(model.ToolInfo{Ref: trust.Ref{Server: "mail", Tool: "send_email"}}, []byte(`{}`),
		&result.Outcome{CallID: "c3", Verdict: trust.Verdict{Action: trust.Allow, By: trust.DecidedByTaintThenFlag}}, nil)
	denied := result.New(model.ToolInfo{Ref: trust.Ref{Server: "mail", Tool: "send_email"}}, []byte(`{}`), nil,
		&model.DeniedError{Verdict: trust.Verdict{Action: trust.Deny, By: trust.DecidedByTaintThenPerson, Reasons: []string{"denied by the person"}}})
	withdrawn := result.New(model.ToolInfo{Ref: trust.Ref{Server: "mail", Tool: "send_email"}}, []byte(`{}`), nil,
		&model.WithdrawnError{Verdict: trust.Verdict{Action: trust.Deny, By: trust.DecidedByAgentGone, Reasons: []string{"the agent disconnected"}}})
	for _, tt := range []struct {
		name string
		res  result.Result
		want string
	}{
		{"allowed", allowed, "asked because of taint; allowed with --yes on the command line, nobody was asked"},
		{"denied", denied, "asked because of taint; you denied it"},
		{"withdrawn", withdrawn, "withdrawn: its agent disconnected before it ran"},
	} {
		got := flat(result.Content(&st, tt.res, 140))
		if !strings.Contains(got, tt.want) || strings.Contains(got, "decided by taint-asked") || strings.Contains(got, "agent-gone") {
			t.Errorf("the result view of the %s call lacks %q or shows the value:\n%s", tt.name, tt.want, got)
		}
	}
	// The withdrawn call's head line wraps at spaces, never cut at the edge.
	for _, l := range strings.Split(ansi.Strip(result.Content(&st, withdrawn, 50)), "\n") {
		if w := ansi.StringWidth(l); w > 50 {
			t.Errorf("a line of the withdrawn call's view is %d wide at 50: %q", w, l)
		}
	}
}
