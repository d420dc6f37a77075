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
	// Next and Prev move focus between the buttons.
	Next key.Binding
	Prev key.Binding
	// Activate presses the focused button.
	Activate key.Binding
	// AllowOnce, AllowContext and Deny choose directly. Deny opens the reason
	// field.
	AllowOnce    key.Binding
	AllowContext key.Binding
	Deny         key.Binding
	// Cancel denies without a reason.
	Cancel key.Binding
	// Up, Down, PageUp and PageDown scroll the arguments.
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	// Confirm is the deliberate second key that allows a destructive call
	// once an allow action armed it. Disarm is shown in help while armed; any
	// key other than Confirm disarms.
	Confirm key.Binding
	Disarm  key.Binding
	// SendReason sends the denial with the typed reason; Back leaves the
	// reason field without deciding.
	SendReason key.Binding
	Back       key.Binding
}

// DefaultKeyMap returns the Confirm dialog's default bindings, in the state
// the dialog starts in (choosing).
func DefaultKeyMap() KeyMap {
	k := KeyMap{
		Next:         key.NewBinding(key.WithKeys("tab", "right"), key.WithHelp("tab/→", "move")),
		Prev:         key.NewBinding(key.WithKeys("shift+tab", "left"), key.WithHelp("shift+tab/←", "previous")),
		Activate:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "press button")),
		AllowOnce:    key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "once")),
		AllowContext: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "for context")),
		Deny:         key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "deny, give reason")),
		Cancel:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "deny")),
		Up:           key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "scroll up")),
		Down:         key.NewBinding(key.WithKeys("down"), key.WithHelp("↑/↓", "scroll")),
		PageUp:       key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
		PageDown:     key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),
		Confirm:      key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "allow this destructive call")),
		Disarm:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("any other key", "cancel")),
		SendReason:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "deny with this reason")),
		Back:         key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
	}
	k.setState(stateChoosing)
	return k
}

// ShortHelp implements help.KeyMap: the bindings that work now.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{
		k.Confirm, k.Disarm,
		k.SendReason, k.Back,
		k.AllowOnce, k.AllowContext, k.Deny, k.Cancel, k.Next, k.Down, k.Activate,
	}
}

// FullHelp implements help.KeyMap: every binding that works now, grouped.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.AllowOnce, k.AllowContext, k.Deny, k.Cancel},
		{k.Next, k.Prev, k.Activate},
		{k.Up, k.Down, k.PageUp, k.PageDown},
		{k.Confirm, k.Disarm, k.SendReason, k.Back},
	}
}

// state is what the dialog is waiting for.
type state int

const (
	stateChoosing state = iota // choosing a button
	stateReason                // typing an optional reason for a denial
	stateArmed                 // a destructive allow waits for Confirm
)

// setState enables exactly the bindings that work in s.
func (k *KeyMap) setState(s state) {
	choosing := s == stateChoosing
	for _, b := range []*key.Binding{&k.Next, &k.Prev, &k.Activate, &k.AllowOnce, &k.AllowContext, &k.Deny, &k.Cancel} {
		b.SetEnabled(choosing)
	}
	// Scrolling the arguments stays possible while typing a reason.
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown} {
		b.SetEnabled(s != stateArmed)
	}
	k.Confirm.SetEnabled(s == stateArmed)
	k.Disarm.SetEnabled(s == stateArmed)
	k.SendReason.SetEnabled(s == stateReason)
	k.Back.SetEnabled(s == stateReason)
}
