package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/ui/screens/serverinfo"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// A rule that can never match is shown in the server's info in red, before the
// notices, escaped like every server-controlled string.
func TestServerInfo_RuleErrorsInRed(t *testing.T) {
	st := theme.New(true, false)
	s := model.ServerInfo{Name: "fs", Status: model.StatusReady, Notices: []string{"a notice"},
		RuleErrors: []model.RuleError{{Tool: "read_file", Rule: "servers.fs.tools.read_file.rules[0]", Text: "rule servers.fs.tools.read_file.rules[0] (config.toml:7): when.pth: the tool's input schema declares no field \"pth\"\x1b]0;x"}}}
	out := serverinfo.Content(&st, s, nil, 200)
	plain := ansi.Strip(out)
	i, j := strings.Index(plain, "Rule errors"), strings.Index(plain, "Notices")
	if i < 0 || j < i || !strings.Contains(plain, `✗ rule servers.fs.tools.read_file.rules[0] (config.toml:7): when.pth`) {
		t.Fatalf("info lacks the rule error before the notices:\n%s", plain)
	}
	if strings.Contains(out, "\x1b]0;x") {
		t.Errorf("a raw escape reached the screen")
	}
	if red := st.ErrorText.Render("✗ "); !strings.Contains(red, "\x1b[") || !strings.Contains(out, red) {
		t.Errorf("the rule error is not marked in the error style %q:\n%q", red, out)
	}
}
