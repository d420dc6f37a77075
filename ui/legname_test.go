package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/screens/activity"
	"github.com/airlock-mcp/airlock/ui/screens/hazards"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// A hazard made of channels names them as a person reads them ("notes
// resources"), never by their synthetic tool names (notes__resources/read); a leg
// of one server's channels and tools still reads "SERVER__*".
func TestBanner_ChannelsNamedAsResourcesAndPrompts(t *testing.T) {
	st := theme.New(true, true)
	h := trust.Hazard{
		Kind:     trust.HazardLethalTrifecta,
		Severity: trust.SeverityCritical,
		Legs: map[string][]string{
			string(trust.LegUntrustedContent): {"web__" + trust.PromptGetTool},
			string(trust.LegPrivateData):      {"notes__" + trust.ResourceReadTool},
			string(trust.LegExfiltration):     {"mail__send_email", "mail__" + trust.ResourceReadTool},
		},
	}
	line := ansi.Strip(hazards.HazardLine(&st, h, 200))
	for _, want := range []string{"web prompts", "notes resources", "mail__* (2)"} {
		if !strings.Contains(line, want) {
			t.Errorf("banner %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "/read") || strings.Contains(line, "/get") {
		t.Errorf("banner names a synthetic tool: %q", line)
	}
}

// The activity row of a resource read names "SERVER resources", not the synthetic
// tool the engine decided it as.
func TestActivityRow_ChannelNamedAsResources(t *testing.T) {
	st := theme.New(true, true)
	e := activity.Entry{Call: model.CallFinished{Server: "everything", Tool: trust.ResourceReadTool}}
	row := ansi.Strip(e.CallRow(&st, 100))
	if !strings.Contains(row, "everything resources") || strings.Contains(row, "resources/read") {
		t.Errorf("activity row %q, want it to name %q", row, "everything resources")
	}
}
