package approval

import (
	"testing"

	"github.com/airlock-mcp/airlock/trust"
)

// The decider of a call that asked is who answered it: the person, or the
// command line's --yes (never a person), after taint when taint made it ask.
func TestAnsweredBy(t *testing.T) {
	for _, tt := range []struct {
		asked, by, want trust.DecidedBy
	}{
		{trust.DecidedByPolicy, "", trust.DecidedByPerson},
		{trust.DecidedByTaint, "", trust.DecidedByTaintThenPerson},
		{trust.DecidedByPolicy, trust.DecidedByFlag, trust.DecidedByFlag},
		{trust.DecidedByRule, trust.DecidedByFlag, trust.DecidedByFlag},
		{trust.DecidedBySecret, trust.DecidedByFlag, trust.DecidedByFlag},
		{trust.DecidedByTaint, trust.DecidedByFlag, trust.DecidedByTaintThenFlag},
		{trust.DecidedByTaint, trust.DecidedByPolicy, trust.DecidedByPolicy},
	} {
		if got := answeredBy(tt.asked, tt.by); got != tt.want {
			t.Errorf("answeredBy(%q, %q) = %q, want %q", tt.asked, tt.by, got, tt.want)
		}
		if got := answerer(tt.want); (got == "the person") != (tt.want == trust.DecidedByPerson || tt.want == trust.DecidedByTaintThenPerson || tt.want == trust.DecidedByPolicy) {
			t.Errorf("answerer(%q) = %q", tt.want, got)
		}
	}
}
