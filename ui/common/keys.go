package common

import (
	"slices"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// KeyMapFunc is a help.KeyMap made of the bindings a child has right now.
type KeyMapFunc struct {
	Short []key.Binding
	Full  [][]key.Binding
}

// ShortHelp implements help.KeyMap.
func (k KeyMapFunc) ShortHelp() []key.Binding { return k.Short }

// FullHelp implements help.KeyMap.
func (k KeyMapFunc) FullHelp() [][]key.Binding { return k.Full }

// ScrollKeyMap holds the keys of a scrollable view (details, results, logs, help).
type ScrollKeyMap struct {
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
}

// Enable turns on the keys that move up (up, top, page up) when up, and those that
// move down when down: a list's footer offers only the moves that do something.
func (k *ScrollKeyMap) Enable(up, down bool) {
	k.Up.SetEnabled(up)
	k.Top.SetEnabled(up)
	k.PageUp.SetEnabled(up)
	k.Down.SetEnabled(down)
	k.Bottom.SetEnabled(down)
	k.PageDown.SetEnabled(down)
}

// DefaultScrollKeyMap returns the scrolling keys.
func DefaultScrollKeyMap() ScrollKeyMap {
	return ScrollKeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "scroll up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "scroll down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "b"), key.WithHelp("pgup/b", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "f", "space"), key.WithHelp("pgdn/f", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "top")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "bottom")),
	}
}

// RowScrollKeyMap returns the scrolling keys of a list of rows: up and down with
// the descriptions given, the page keys named pgup and pgdn, and home and end
// going to the first and the last row.
func RowScrollKeyMap(up, down string) ScrollKeyMap {
	k := DefaultScrollKeyMap()
	k.Up.SetHelp("↑/k", up)
	k.Down.SetHelp("↓/j", down)
	k.PageUp.SetHelp("pgup", "page up")
	k.PageDown.SetHelp("pgdn", "page down")
	k.Top.SetHelp("g/home", "first")
	k.Bottom.SetHelp("G/end", "last")
	return k
}

// ShortKey is b with the description desc in its help, for a footer that must fit
// in 80 columns.
func ShortKey(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// ViewportKeys adapts the scrolling keys to a viewport; horizontal scrolling is off
// (text is wrapped), which also leaves h and l free.
func (k ScrollKeyMap) ViewportKeys() viewport.KeyMap {
	vk := viewport.DefaultKeyMap()
	vk.Up, vk.Down, vk.PageUp, vk.PageDown = k.Up, k.Down, k.PageUp, k.PageDown
	vk.HalfPageUp = key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u", "½ page up"))
	vk.HalfPageDown = key.NewBinding(key.WithKeys("ctrl+d"), key.WithHelp("ctrl+d", "½ page down"))
	vk.Left = key.NewBinding(key.WithDisabled())
	vk.Right = key.NewBinding(key.WithDisabled())
	return vk
}

func (k ScrollKeyMap) Column() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}
}

// HelpLine is the one-line help of bindings at most width cells wide: when
// the line is too wide, whole bindings go from the end, and "…" says some
// were left out. bubbles' help adds an item that overflows when its ellipsis
// does not fit either, and a line cut after it ended mid-word ("↑/↓ scrol…").
func HelpLine(h help.Model, bindings []key.Binding, width int) string {
	h.SetWidth(0) // whole bindings are dropped here, the ellipsis added here
	for n := len(bindings); ; n-- {
		out := h.ShortHelpView(bindings[:n])
		if slices.ContainsFunc(bindings[n:], key.Binding.Enabled) {
			out += " " + h.Styles.Ellipsis.Render(Ellipsis) // some are left out
		}
		if width <= 0 || lipgloss.Width(out) <= width {
			return out
		}
		if n <= 1 { // one binding wider than the line: cut it, saying so
			return ansi.Truncate(out, width, Ellipsis)
		}
	}
}
