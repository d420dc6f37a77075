package question

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/dialog/wrap"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// ChoiceKeyMap is the keys of a two-button question (quit, accepting a changed
// definition, clearing a taint, airlock's own questions). Focus starts on the safe
// button and moves only with → and ←: tab, Enter, j/k, space and the letters are
// the screens' own keys behind the question, so a person who goes on navigating
// never moves focus onto the second button. Where Confirm has keys (accepting a
// changed definition, clearing a taint), Enter on the second button only asks for
// that chord.
type ChoiceKeyMap struct {
	Next     key.Binding
	Activate key.Binding
	// Yes presses the second button at once. It is bound only for the quit
	// question: quitting denies what waits and allows nothing.
	Yes key.Binding
	// No presses the safe button.
	No key.Binding
	// Confirm, when it has keys, is the chord that presses the second button
	// after Enter was pressed on it: the second button makes airlock less careful.
	// It is enabled only while it waits; Disarm (any other key) then goes back,
	// with focus on the safe button.
	Confirm key.Binding
	Disarm  key.Binding
}

// chord reports whether the second button waits for Confirm after Enter.
func (k ChoiceKeyMap) chord() bool { return len(k.Confirm.Keys()) > 0 }

// setWaiting enables the keys of waiting for Confirm (on) or of choosing.
func (k *ChoiceKeyMap) setWaiting(on bool) {
	for _, b := range []*key.Binding{&k.Next, &k.Activate, &k.No} {
		b.SetEnabled(!on)
	}
	if len(k.Yes.Keys()) > 0 {
		k.Yes.SetEnabled(!on)
	}
	k.Confirm.SetEnabled(on && k.chord())
	k.Disarm.SetEnabled(on && k.chord())
}

// ShortHelp implements help.KeyMap.
func (k ChoiceKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Confirm, k.Disarm, k.Next, k.Activate, k.Yes, k.No}
}

// FullHelp implements help.KeyMap: every key of the question, the chord included
// (it is the last step of pressing the second button).
func (k ChoiceKeyMap) FullHelp() [][]key.Binding {
	all := []key.Binding{k.Next, k.Activate, k.Yes, k.No}
	if k.chord() {
		c := k.Confirm
		c.SetEnabled(true)
		all = append(all, c)
	}
	return [][]key.Binding{all}
}

// moveKeys moves focus between the two buttons.
func moveKeys() key.Binding {
	return key.NewBinding(key.WithKeys("right", "left"), key.WithHelp("←/→", "move"))
}

// chordKeys is the Confirm chord of a second button that makes airlock less
// careful, and its Disarm; what is the help's word for the second button.
func chordKeys(what string) (key.Binding, key.Binding) {
	return key.NewBinding(key.WithKeys("ctrl+y"), key.WithHelp("ctrl+y", what), key.WithDisabled()),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("any other key", "go back"), key.WithDisabled())
}

// QuitKeyMap is the quit question's keys: y quits, n or esc stays, or ←/→ and
// enter (quitting denies what waits and allows nothing, so it needs no chord).
func QuitKeyMap() ChoiceKeyMap {
	return ChoiceKeyMap{
		Next:     moveKeys(),
		Activate: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "press")),
		Yes:      key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "quit")),
		No:       key.NewBinding(key.WithKeys("n", "N", "esc", "q"), key.WithHelp("n/esc", "stay")),
		Confirm:  key.NewBinding(key.WithDisabled()),
		Disarm:   key.NewBinding(key.WithDisabled()),
	}
}

// AcceptKeyMap is the keys of accepting a changed definition: no letter accepts;
// → moves to Accept, Enter presses it and ctrl+y accepts; esc or n keeps it blocked.
func AcceptKeyMap() ChoiceKeyMap {
	confirm, disarm := chordKeys("accept the new definition")
	return ChoiceKeyMap{
		Next:     moveKeys(),
		Activate: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "press")),
		Yes:      key.NewBinding(key.WithDisabled()),
		No:       key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n/esc", "keep blocked")),
		Confirm:  confirm,
		Disarm:   disarm,
	}
}

// ClearTaintKeyMap is the keys of clearing a context's taint: as for accepting a
// changed definition, no letter clears; → moves to Clear, Enter presses it and
// ctrl+y clears; esc or n keeps the taint.
func ClearTaintKeyMap() ChoiceKeyMap {
	k := AcceptKeyMap()
	k.No.SetHelp("n/esc", "keep tainted")
	k.Confirm.SetHelp("ctrl+y", "clear the taint")
	return k
}

// ChoiceKeys is the keys of a two-button question whose second button is pressed
// only with focus (→) and Enter: no letter presses it; esc or n answers the first.
// The second button of such a question allows nothing (it undoes, revokes or
// restores), so it needs no chord.
func ChoiceKeys(first string) ChoiceKeyMap {
	return ChoiceKeyMap{
		Next:     moveKeys(),
		Activate: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "press")),
		Yes:      key.NewBinding(key.WithDisabled()),
		No:       key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n/esc", first)),
		Confirm:  key.NewBinding(key.WithDisabled()),
		Disarm:   key.NewBinding(key.WithDisabled()),
	}
}

// GuardedChoiceKeys is ChoiceKeys for a question whose second button makes airlock
// less careful (revoking a remembered deny rule): → moves to it, Enter presses it and
// ctrl+y confirms; what is the help's word for the second button.
func GuardedChoiceKeys(first, what string) ChoiceKeyMap {
	k := ChoiceKeys(first)
	k.Confirm, k.Disarm = chordKeys(what)
	return k
}

// choice is a two-button question: buttons[0] is safe and has focus first.
type choice struct {
	title   string
	lines   []string // airlock's own sentences, or text escaped by the caller
	buttons [2]string
	keys    ChoiceKeyMap
	focus   int
	// waiting says Enter was pressed on the second button and the Confirm chord
	// is what presses it now.
	waiting bool
}

// reset puts focus on the safe button and drops a press waiting for its chord.
func (c *choice) reset() {
	c.focus = 0
	c.waiting = false
	c.keys.setWaiting(false)
}

// key returns 0 or 1 once a button is pressed, -1 otherwise.
func (c *choice) key(k tea.KeyPressMsg) int {
	if c.waiting {
		if key.Matches(k, c.keys.Confirm) {
			return 1
		}
		// Any other key, whatever it is, only goes back, to the safe button.
		c.reset()
		return -1
	}
	switch {
	case key.Matches(k, c.keys.Yes):
		return 1
	case key.Matches(k, c.keys.No):
		return 0
	case key.Matches(k, c.keys.Next):
		c.focus = 1 - c.focus
	case key.Matches(k, c.keys.Activate):
		if c.focus == 1 && c.keys.chord() {
			c.waiting = true
			c.keys.setWaiting(true)
			return -1
		}
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
		if c.waiting {
			lines = append(lines, wrap.Words(st.WarnText.Render("Press ctrl+y to "+c.keys.Confirm.Help().Desc+"; any other key goes back."), iw)...)
		}
		lines = append(lines, common.HelpLine(h, c.keys.ShortHelp(), iw))
	}
	return fr.Width(w).Render(strings.Join(lines, "\n"))
}

// ArmingText is what every question says while it ignores keys.
const ArmingText = "arming… keys are ignored until the keyboard is quiet"
