package dialog

import (
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/theme"
)

func fencedTool(f trust.Fence) model.ToolInfo {
	t := claimingTool()
	t.Facts = &model.ServerFacts{Fence: f}
	return t
}

// The dialog says what the server's sandbox enforces, and an asked-for sandbox
// that was not applied as a warning, escaped.
func TestConfirmShowsTheSandbox(t *testing.T) {
	fenced := NewConfirm(pending(fencedTool(trust.Fence{Requested: true, Applied: true, Network: "none", Read: []string{"~/project"}, Write: []string{"~/project/out"}}), `{}`), plain(), testRules)
	fenced.SetSize(120, 40)
	if v := text(fenced.View()); !strings.Contains(v, "sandbox fenced: no network, reads ~/project, writes ~/project/out") {
		t.Errorf("view lacks the fence:\n%s", v)
	}

	unfenced := trust.Fence{Requested: true, Network: "none", Detail: "landlock_create_ruleset: \x1b[31mENOSYS"}
	c := NewConfirm(pending(fencedTool(unfenced), `{}`), plain(), testRules)
	c.SetSize(120, 40)
	v := text(c.View())
	if !strings.Contains(v, "sandbox ⚠ unfenced: sandbox requested but not applied:") || !strings.Contains(v, "landlock_create_ruleset: ⟨ESC⟩[31mENOSYS") {
		t.Errorf("view lacks the unfenced warning:\n%s", v)
	}
	if strings.Contains(c.View(), "\x1b[31mENOSYS") {
		t.Error("the launcher's detail reached the terminal raw")
	}
	st := theme.New(true, false)
	c = NewConfirm(pending(fencedTool(unfenced), `{}`), st, testRules)
	c.SetSize(120, 40)
	if want := st.ErrorText.Render("⚠ unfenced"); !strings.Contains(c.View(), want) {
		t.Errorf("unfenced is not in the error style %q", want)
	}

	none := NewConfirm(pending(claimingTool(), `{}`), plain(), testRules)
	none.SetSize(120, 40)
	if v := text(none.View()); strings.Contains(v, "sandbox") {
		t.Errorf("a server with no sandbox asked for shows a sandbox row:\n%s", v)
	}
}
