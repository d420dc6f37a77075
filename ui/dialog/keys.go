package dialog

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
)

var _ help.KeyMap = KeyMap{}

// KeyMap is the Confirm dialog's key bindings. Confirm enables and disables
// them by state (choosing, typing a reason, armed for a destructive call), so
// help built from ShortHelp and FullHelp always shows exactly the keys that
// work.
type KeyMap struct {
	// Next and Prev move focus between the buttons: → and ← only. Tab, Enter,
	// j/k, space and the letters are the screens' own keys behind the dialog, so a
	// person who goes on navigating never moves focus onto an allow button.
	Next key.Binding
	Prev key.Binding
	// Activate presses the focused button. Pressing an allow button never
	// allows by itself: it asks for Confirm.
	Activate key.Binding
	// Deny opens the reason field. No letter allows: an allow button is
	// pressed only with focus moved to it (Next) and Activate, then Confirm.
	Deny key.Binding
	// Cancel denies without a reason.
	Cancel key.Binding
	// Up, Down, PageUp and PageDown scroll the arguments; Top and End jump to
	// their first and last byte.
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	End      key.Binding
	// Why unfolds the reasons (why the call asks, the taint) below the
	// arguments, or folds them back into their summary line.
	Why key.Binding
	// Reveal shows the secrets found in the arguments as they are, or masks them
	// again ("ghp_…(40 chars)"): a display toggle that answers nothing, enabled
	// only when the call's arguments hold a secret. No screen behind the dialog
	// binds it, so a person who goes on navigating never reveals one.
	Reveal key.Binding
	// Confirm is the deliberate last step that allows a call once an allow
	// button was pressed (or an "Always allow" rule saved): a control chord that
	// no screen binds and no typed word contains. Disarm is shown in help while
	// it waits; any key other than Confirm goes back, with focus on Deny.
	Confirm key.Binding
	Disarm  key.Binding
	// SendReason sends the denial with the typed reason; Back leaves the
	// reason field without deciding.
	SendReason key.Binding
	Back       key.Binding
	// SaveRule saves the edited rule of "Always allow" or "Always deny" (and
	// answers the call); Back leaves the rule editor without deciding.
	SaveRule key.Binding
}

// DefaultKeyMap returns the Confirm dialog's default bindings, in the state
// the dialog starts in (choosing).
func DefaultKeyMap() KeyMap {
	k := KeyMap{
		Next:       key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "next button")),
		Prev:       key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "previous button")),
		Activate:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "press button")),
		Deny:       key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "deny, give reason")),
		Cancel:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "deny")),
		Up:         key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "scroll up")),
		Down:       key.NewBinding(key.WithKeys("down"), key.WithHelp("↑/↓", "scroll")),
		PageUp:     key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
		PageDown:   key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),
		Top:        key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "first byte")),
		End:        key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "last byte")),
		Why:        key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "why: show/fold the reasons")),
		Reveal:     key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "show/mask the secrets")),
		Confirm:    key.NewBinding(key.WithKeys("ctrl+y"), key.WithHelp("ctrl+y", "allow")),
		Disarm:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("any other key", "go back")),
		SendReason: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "deny with this reason")),
		Back:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		SaveRule:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "save the rule")),
	}
	k.setState(stateChoosing)
	return k
}

// ShortHelp implements help.KeyMap: the bindings that work now.
func (k KeyMap) ShortHelp() []key.Binding {
	move := k.Next
	move.SetHelp("←/→", "move")
	return []key.Binding{
		k.Confirm, k.Disarm,
		k.SendReason, k.SaveRule, k.Back,
		move, k.Activate, k.Cancel, k.Deny, k.Why, k.Reveal, k.Down, k.End,
	}
}

// FullHelp implements help.KeyMap: every binding that works now, grouped.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Next, k.Prev, k.Activate},
		{k.Deny, k.Cancel},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.End, k.Why, k.Reveal},
		{k.Confirm, k.Disarm, k.SendReason, k.SaveRule, k.Back},
	}
}

// state is what the dialog is waiting for.
type state int

const (
	stateChoosing state = iota // choosing a button
	stateReason                // typing an optional reason for a denial
	stateArmed                 // an allow waits for Confirm
	stateArming                // the input guard ignores answers (scrolling works)
	stateRule                  // editing the rule of "Always allow" or "Always deny"
)

// setState enables exactly the bindings that work in s.
func (k *KeyMap) setState(s state) {
	choosing := s == stateChoosing
	if s == stateArming {
		// Only reading works while the guard arms; help says nothing else.
		for _, b := range []*key.Binding{&k.Next, &k.Prev, &k.Activate, &k.Deny, &k.Cancel, &k.Confirm, &k.Disarm, &k.SendReason, &k.Back, &k.SaveRule} {
			b.SetEnabled(false)
		}
		for _, b := range []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Top, &k.End, &k.Why, &k.Reveal} {
			b.SetEnabled(true)
		}
		return
	}
	for _, b := range []*key.Binding{&k.Next, &k.Prev, &k.Activate, &k.Deny, &k.Cancel} {
		b.SetEnabled(choosing)
	}
	// Scrolling the arguments stays possible while typing a reason or a rule.
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Top, &k.End} {
		b.SetEnabled(s != stateArmed)
	}
	// In the rule editor home and end move the text cursor.
	k.Top.SetEnabled(s != stateArmed && s != stateRule)
	k.End.SetEnabled(s != stateArmed && s != stateRule)
	k.SaveRule.SetEnabled(s == stateRule)
	k.Why.SetEnabled(s == stateChoosing)
	k.Reveal.SetEnabled(s == stateChoosing)
	k.Confirm.SetEnabled(s == stateArmed)
	k.Disarm.SetEnabled(s == stateArmed)
	k.SendReason.SetEnabled(s == stateReason)
	k.Back.SetEnabled(s == stateReason || s == stateRule)
}
