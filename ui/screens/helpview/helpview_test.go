package helpview

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/ui/theme"
)

type keys []key.Binding

func (k keys) ShortHelp() []key.Binding  { return k }
func (k keys) FullHelp() [][]key.Binding { return [][]key.Binding{k} }

// The help fits its width: every line is at most the width, and every word
// shown at a wide width is shown whole at a narrow one (wrapped at spaces,
// never cut).
func TestContent_FitsItsWidthWithoutCuttingWords(t *testing.T) {
	st := theme.New(true, true)
	sections := []Section{
		{Title: "Main screen", Keys: keys{
			key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "what-if: change a tool's policy for this session only, never the config file")),
			key.NewBinding(key.WithKeys("E"), key.WithHelp("E", "export the session's what-if changes as a config snippet"), key.WithDisabled()),
		}},
		{Title: "Connect an agent", Lines: []string{"  airlock gateway snippet --client claude-code prints what to paste into the agent's settings"}},
	}
	wide := strings.Fields(ansi.Strip(Content(&st, sections, 400)))
	for _, width := range []int{38, 56, 76} {
		v := ansi.Strip(Content(&st, sections, width))
		for _, l := range strings.Split(v, "\n") {
			if w := lipgloss.Width(l); w > width {
				t.Errorf("width %d: a line of %d cells: %q", width, w, l)
			}
		}
		if got := strings.Fields(v); strings.Join(got, " ") != strings.Join(wide, " ") {
			t.Errorf("width %d: words differ from the wide help:\n%s", width, v)
		}
	}
}
