package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/screens/activity"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// The Activity's full record of a call that ended unanswered (timed out, or withdrawn
// by its caller while it waited) says why it asked, as the audit record does.
func TestActivity_UnansweredCallSaysWhyItAsked(t *testing.T) {
	st := theme.New(true, true)
	const asked = "asked because the context is tainted by evil__fetch_err (error message, call c1)"
	for _, tt := range []struct {
		outcome, by, ending string
	}{
		{"denied", string(trust.DecidedByTimeout), "nobody answered within 3s"},
		{"cancelled", string(trust.DecidedByAgentCancelled), "the caller withdrew the call while it waited for a person"},
	} {
		call := model.CallFinished{
			CallID: "c2", Client: "agent", Context: "agent-x", Server: "mail", Tool: "send_email", Tier: "write",
			Args: []byte(`{}`), DecidedBy: tt.by, Reasons: []string{asked, tt.ending}, Outcome: tt.outcome, At: time.Now(),
		}
		if tt.outcome == "denied" {
			call.Decision = "deny"
		}
		e := activity.Entry{At: call.At, Call: call}
		got := strings.Join(strings.Fields(ansi.Strip(e.RecordContent(&st, 100))), " ")
		for _, want := range []string{asked, tt.ending} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: the record lacks %q:\n%s", tt.outcome, want, got)
			}
		}
	}
}
