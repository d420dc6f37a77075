package ui

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/screens/hazards"
)

// Tools whose long names share a beginning stay told apart in the hazards view:
// every row shows a different name, each its own tail.
func TestHazardsViewLongNamesStayDistinct(t *testing.T) {
	const server = "github-enterprise-mirror"
	tools := []string{"github.repos.content.get", "github.repos.content.delete_permanently", "github.repos.content.delete_permanently_v2"}
	snap := &model.Snapshot{
		Servers: []model.ServerInfo{{Name: server}, {Name: "web", Trust: trust.Trusted}},
		Tools:   []*model.ToolInfo{{Ref: trust.Ref{Server: "web", Tool: "fetch"}, Class: trust.Classification{Tier: trust.TierRead}, ServerTrust: trust.Trusted}},
	}
	var dest []string
	for _, tool := range tools {
		snap.Tools = append(snap.Tools, &model.ToolInfo{Ref: trust.Ref{Server: server, Tool: tool}, Class: trust.Classification{Tier: trust.TierDestructive}})
		dest = append(dest, server+"__"+tool)
	}
	slices.SortFunc(snap.Tools, func(a, b *model.ToolInfo) int { return strings.Compare(a.Ref.Qualified(), b.Ref.Qualified()) })
	snap.Hazards = []trust.Hazard{{Kind: trust.HazardOpenWorldExfiltration, Severity: trust.SeverityHigh,
		Legs:    map[string][]string{"untrusted-content": {"web__fetch"}, "exfiltration": dest},
		Summary: "web__fetch reads untrusted content and the mirror can destroy"}}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		v := hazards.New(&common.Common{St: newTestStyles()})
		v.SetSize(size[0], size[1])
		v.SetData(snap, model.Overrides{}, nil)
		v.Open()
		seen := map[string]bool{}
		rows := 0
		for _, l := range v.Lines {
			if l.Ref.Server != server {
				continue
			}
			rows++
			text := strings.TrimSpace(ansi.Strip(l.Text))
			if seen[text] {
				t.Errorf("%dx%d: two tools read the same: %q", size[0], size[1], text)
			}
			seen[text] = true
			name := strings.Fields(text)[0]
			head, tail := name, ""
			if i, j := strings.Index(name, "…"), strings.LastIndex(name, "…"); i >= 0 {
				head, tail = name[:i], name[j+len("…"):]
			}
			if want := l.Ref.Qualified(); !strings.HasPrefix(want, head) || !strings.HasSuffix(want, tail) || len(tail) < 3 {
				t.Errorf("%dx%d: %q does not keep the start and the end of %q", size[0], size[1], name, want)
			}
		}
		if rows != len(tools) {
			t.Errorf("%dx%d: %d rows of the mirror's tools, want %d", size[0], size[1], rows, len(tools))
		}
	}
}
