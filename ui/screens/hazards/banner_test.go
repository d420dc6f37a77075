package hazards

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// An unguarded hazard's banner names, for each leg, a member that runs unasked: the
// untrusted-content leg's example is the resources channel that runs unasked, not
// the tool that fills no other leg but asks.
func TestHazardLine_NamesWhatRunsUnasked(t *testing.T) {
	st := theme.New(true, true)
	stp := &st
	h := trust.Hazard{
		Kind: trust.HazardOpenWorldExfiltration, Severity: trust.SeverityHigh, Unguarded: true,
		Legs: map[string][]string{
			"untrusted-content": {"ev__resources/read", "web__fetch_url"},
			"exfiltration":      {"ev__resources/read", "mail__send"},
		},
		Unasked: []string{"ev__resources/read"},
	}
	got := ansi.Strip(HazardLine(stp, h, 120))
	if !strings.Contains(got, "OPEN-WORLD EXFILTRATION: ev resources → ev resources") {
		t.Errorf("banner = %q, want each leg's example to be what runs unasked", got)
	}
}
