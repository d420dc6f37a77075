package form

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
)

var _ help.KeyMap = KeyMap{}

// KeyMap is a form's key bindings. The form enables and disables them by
// state (which kind of field has focus, raw JSON mode, call or elicitation),
// so help built from ShortHelp and FullHelp shows exactly the keys that work.
type KeyMap struct {
	// Next and Prev move between fields from anywhere, a JSON editor
	// included.
	Next key.Binding
	Prev key.Binding
	// Down and Up move between fields too, except inside a JSON editor,
	// where they move the cursor.
	Down key.Binding
	Up   key.Binding
	// Enter moves to the next field, and submits on the last one. Inside a
	// JSON editor it is a newline.
	Enter key.Binding
	// Toggle, ChoiceNext and ChoicePrev change a true/false or enum field.
	Toggle     key.Binding
	ChoiceNext key.Binding
	ChoicePrev key.Binding
	// Submit sends the call, or accepts an elicitation.
	Submit key.Binding
	// Decline declines an elicitation (elicitation forms only).
	Decline key.Binding
	// Cancel closes the form without an answer.
	Cancel key.Binding
	// Raw switches between the fields and raw JSON for the whole form.
	Raw key.Binding
	// PageDown and PageUp scroll the form when it is taller than the space
	// (inside a JSON editor they page the editor).
	PageDown key.Binding
	PageUp   key.Binding
	// AddItem appends an empty item of the right shape to an array-of-objects
	// field's JSON.
	AddItem key.Binding
	// Suggest puts the server's next suggested value in a text field; it is
	// enabled only while the focused field has suggestions.
	Suggest key.Binding
}

// DefaultKeyMap returns the call form's default bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Next:       key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next field")),
		Prev:       key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous field")),
		Down:       key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "next field")),
		Up:         key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "previous field")),
		Enter:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "next")),
		Toggle:     key.NewBinding(key.WithKeys("space"), key.WithHelp("space/←/→", "change")),
		ChoiceNext: key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "next choice")),
		ChoicePrev: key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "previous choice")),
		Submit:     key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "submit")),
		Decline:    key.NewBinding(key.WithKeys("ctrl+d"), key.WithHelp("ctrl+d", "decline"), key.WithDisabled()),
		Cancel:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		Raw:        key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "raw JSON")),
		PageDown:   key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "scroll down")),
		PageUp:     key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "scroll up")),
		AddItem:    key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "add an item"), key.WithDisabled()),
		Suggest:    key.NewBinding(key.WithKeys("ctrl+n"), key.WithHelp("ctrl+n", "take the next suggestion"), key.WithDisabled()),
	}
}

// elicitKeyMap is DefaultKeyMap worded for an elicitation.
func elicitKeyMap() KeyMap {
	k := DefaultKeyMap()
	k.Submit.SetHelp("ctrl+s", "accept")
	k.Decline.SetEnabled(true)
	return k
}

// ShortHelp implements help.KeyMap: the bindings that work now.
func (k KeyMap) ShortHelp() []key.Binding {
	suggest := k.Suggest
	suggest.SetHelp("ctrl+n", "suggestion")
	return []key.Binding{k.Submit, k.Decline, k.Cancel, k.Next, suggest, k.Toggle, k.AddItem, k.Raw}
}

// FullHelp implements help.KeyMap: every binding that works now, grouped.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Submit, k.Decline, k.Cancel, k.Raw},
		{k.Next, k.Prev, k.Down, k.Up, k.Enter},
		{k.Toggle, k.ChoiceNext, k.ChoicePrev, k.AddItem, k.Suggest, k.PageDown, k.PageUp},
	}
}
