package question

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/ui/dialog/wrap"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// ChoiceKeyMap is the keys of a two-button question (quit, accepting a changed
// definition). Focus starts on the safe button; the other one is pressed only
// with focus moved to it and Enter, or, where Yes is bound, its key.
type ChoiceKeyMap struct {
	Next     key.Binding
	Prev     key.Binding
	Activate key.Binding
	// Yes presses the second button at once. It is bound only for the quit
	// question: quitting denies what waits and allows nothing.
	Yes key.Binding
	// No presses the safe button.
	No key.Binding
}

// ShortHelp implements help.KeyMap.
func (k ChoiceKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Next, k.Activate, k.Yes, k.No}
}

// FullHelp implements help.KeyMap.
func (k ChoiceKeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// QuitKeyMap is the quit question's keys: y quits, n or esc stays, or tab/enter.
func QuitKeyMap() ChoiceKeyMap {
	return ChoiceKeyMap{
		Next:     key.NewBinding(key.WithKeys("tab", "right", "shift+tab", "left"), key.WithHelp("tab", "move")),
		Activate: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "press")),
		Yes:      key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "quit")),
		No:       key.NewBinding(key.WithKeys("n", "N", "esc", "q"), key.WithHelp("n/esc", "stay")),
	}
}

// AcceptKeyMap is the keys of accepting a changed definition: no letter accepts;
// tab (or →) moves to Accept and Enter presses it; esc or n keeps it blocked.
func AcceptKeyMap() ChoiceKeyMap {
	return ChoiceKeyMap{
		Next:     key.NewBinding(key.WithKeys("tab", "right", "shift+tab", "left"), key.WithHelp("tab/→", "move")),
		Activate: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "press")),
		Yes:      key.NewBinding(key.WithDisabled()),
		No:       key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n/esc", "keep blocked")),
	}
}

// ClearTaintKeyMap is the keys of clearing a context's taint: as for accepting a
// changed definition, no letter clears; tab (or →) moves to Clear and Enter presses
// it; esc or n keeps the taint.
func ClearTaintKeyMap() ChoiceKeyMap {
	k := AcceptKeyMap()
	k.No.SetHelp("n/esc", "keep tainted")
	return k
}

// choice is a two-button question: buttons[0] is safe and has focus first.
type choice struct {
	title   string
	lines   []string // airlock's own sentences, or text escaped by the caller
	buttons [2]string
	keys    ChoiceKeyMap
	focus   int
}

// key returns 0 or 1 once a button is pressed, -1 otherwise.
func (c *choice) key(k tea.KeyPressMsg) int {
	switch {
	case key.Matches(k, c.keys.Yes):
		return 1
	case key.Matches(k, c.keys.No):
		return 0
	case key.Matches(k, c.keys.Next):
		c.focus = 1 - c.focus
	case key.Matches(k, c.keys.Activate):
		return c.focus
	}
	return -1
}

func (c choice) view(st theme.Styles, h help.Model, w int, arming bool) string {
	w = min(w, 72)
	fr := st.Dialog
	iw := max(w-fr.GetHorizontalFrameSize(), 10)
	lines := wrap.Words(st.Title.Render(c.title), iw)
	lines = append(lines, "")
	for _, l := range c.lines {
		lines = append(lines, wrap.Words(l, iw)...)
	}
	lines = append(lines, "")
	var bs []string
	for i, b := range c.buttons {
		switch {
		case arming:
			bs = append(bs, st.Muted.Render("  "+b))
		case i == c.focus:
			bs = append(bs, st.ButtonOn.Render("▸ "+b))
		default:
			bs = append(bs, st.Button.Render("  "+b))
		}
	}
	if row := strings.Join(bs, " "); lipgloss.Width(row) <= iw {
		lines = append(lines, row)
	} else {
		lines = append(lines, bs...)
	}
	if arming {
		lines = append(lines, st.WarnText.Render(ArmingText))
	} else {
		lines = append(lines, ansi.Truncate(h.ShortHelpView(c.keys.ShortHelp()), iw, "…"))
	}
	return fr.Width(w).Render(strings.Join(lines, "\n"))
}

// ArmingText is what every question says while it ignores keys.
const ArmingText = "arming… keys are ignored until the keyboard is quiet"
