package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/screens/detail"
	"github.com/airlock-mcp/airlock/ui/screens/hazards"
	"github.com/airlock-mcp/airlock/ui/screens/panes"
)

var (
	fsFence   = trust.Fence{Requested: true, Applied: true, Network: "none", Read: []string{"~/project"}, Write: []string{"~/project/out"}}
	mailFence = trust.Fence{Requested: true, Network: "none", Detail: "landlock_create_ruleset: \x1b[31mENOSYS"}
)

// The tool detail says what its server's sandbox enforces; one asked for and not
// applied is a warning, escaped.
func TestDetailShowsTheSandbox(t *testing.T) {
	st := newTestStyles()
	tool := model.ToolInfo{Ref: trust.Ref{Server: "fs", Tool: "write"}, Facts: &model.ServerFacts{Fence: fsFence}}
	plain := ansi.Strip(detail.DetailContent(st, tool, detail.ServedNameOf(nil, &tool), trust.Verdict{}, nil, false, 100))
	screenHas(t, plain, "sandbox   fenced: no network, reads ~/project, writes ~/project/out")
	tool.Facts = &model.ServerFacts{Fence: mailFence}
	out := detail.DetailContent(st, tool, detail.ServedNameOf(nil, &tool), trust.Verdict{}, nil, false, 100)
	screenHas(t, ansi.Strip(out), "sandbox   ⚠ unfenced: sandbox requested but not applied: landlock_create_ruleset: ⟨ESC⟩[31mENOSYS")
	if strings.Contains(out, "\x1b[31mENOSYS") {
		t.Error("the launcher's detail reached the terminal raw")
	}
	tool.Facts = nil
	if plain := ansi.Strip(detail.DetailContent(st, tool, detail.ServedNameOf(nil, &tool), trust.Verdict{}, nil, false, 100)); strings.Contains(plain, "sandbox") {
		t.Errorf("a server without a sandbox shows a sandbox line:\n%s", plain)
	}
}

// The hazards view marks each tool row with its server's sandbox and lists every
// sandbox asked for, so a fenced server that left the hazards is still explained.
func TestHazardsViewShowsSandboxes(t *testing.T) {
	mail := &model.ToolInfo{Ref: trust.Ref{Server: "mail", Tool: "send"}, Class: trust.Classification{Tier: trust.TierWrite}, Facts: &model.ServerFacts{Fence: mailFence}}
	web := &model.ToolInfo{Ref: trust.Ref{Server: "web", Tool: "fetch"}, Class: trust.Classification{Tier: trust.TierRead}, ServerTrust: trust.Trusted}
	snap := &model.Snapshot{
		Servers: []model.ServerInfo{{Name: "fs", Fence: fsFence}, {Name: "mail", Fence: mailFence}, {Name: "web", Trust: trust.Trusted}},
		Tools:   []*model.ToolInfo{mail, web},
		Hazards: []trust.Hazard{{Kind: trust.HazardOpenWorldExfiltration, Severity: trust.SeverityHigh,
			Legs:    map[string][]string{"untrusted-content": {"web__fetch"}, "exfiltration": {"mail__send"}},
			Summary: "web__fetch reads untrusted content and mail__send can send it out"}},
	}
	v := hazards.New(&common.Common{St: newTestStyles()})
	v.SetSize(140, 40)
	v.SetData(snap, model.Overrides{}, nil)
	v.Open()
	var b strings.Builder
	for _, l := range v.Lines {
		b.WriteString(l.Text + "\n")
	}
	raw := b.String()
	plain := ansi.Strip(raw)
	screenHas(t, plain, "UNFENCED", "Sandboxes",
		"  fs         fenced: no network, reads ~/project, writes ~/project/out",
		"  mail       ⚠ unfenced: sandbox requested but not applied: landlock_create_ruleset: ⟨ESC⟩[31mENOSYS")
	for _, l := range strings.Split(plain, "\n") {
		if strings.HasPrefix(l, "  mail__send ") && !strings.Contains(l, "UNFENCED") {
			t.Errorf("the unfenced server's tool row does not say so: %q", l)
		}
		if strings.Contains(l, "web__fetch") && strings.Contains(l, "fenced") {
			t.Errorf("a server without a sandbox is marked: %q", l)
		}
	}
	if strings.Contains(raw, "\x1b[31mENOSYS") {
		t.Error("the launcher's detail reached the terminal raw")
	}
}

// The servers pane marks a server whose sandbox was asked for and not applied.
func TestServersPaneMarksUnfenced(t *testing.T) {
	p := panes.NewServersPane(&common.Common{St: newTestStyles()})
	p.SetSize(40, 12)
	p.SetServers([]model.ServerInfo{{Name: "mail", Status: model.StatusReady, Fence: mailFence}, {Name: "fs", Status: model.StatusReady, Fence: fsFence}})
	v := ansi.Strip(p.View())
	if strings.Count(v, "UNFENCED") != 1 {
		t.Errorf("want one UNFENCED mark (mail):\n%s", v)
	}
}
