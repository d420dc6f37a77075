package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/screens/panes"
)

// At 60 columns the servers pane is 24 wide and a name gets six cells: two servers
// that share a start and an end must still read differently.
func TestServersPaneNarrowNamesStayDistinct(t *testing.T) {
	names := []string{"github-enterprise-mirror", "gitlab-enterprise-mirror", "github-mirror", "everything", "evening"}
	var servers []model.ServerInfo
	for _, n := range names {
		servers = append(servers, model.ServerInfo{Name: n, Status: model.StatusReady})
	}
	for _, w := range []int{24, 26, 30} {
		p := panes.NewServersPane(&common.Common{St: newTestStyles()})
		p.SetSize(w, 2+2+2*len(names))
		p.SetServers(servers)
		seen := map[string]string{}
		for i := range names {
			first := strings.TrimSpace(ansi.Strip(p.ServerLines(i, false, w-2, p.ShownNames(w - 2)[i])[0]))
			if other, ok := seen[first]; ok {
				t.Errorf("width %d: %s and %s both read %q", w, other, names[i], first)
			}
			seen[first] = names[i]
		}
		v := ansi.Strip(p.View())
		for first := range seen {
			if !strings.Contains(v, first) {
				t.Errorf("width %d: the pane does not show %q:\n%s", w, first, v)
			}
		}
	}
}
