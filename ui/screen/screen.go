// Package screen is the one shape of a screen of airlock's terminal UI: the root
// holds each screen by this interface, gives it its size, hands it the keys while
// it is on top and draws it in the body. A screen never acts on the session or
// on the root itself: what a key asks for comes back as an Intent (back, open X,
// call Y, ...), a value the root carries out.
//
// A screen lives in its own package under ui/screens and imports only
// internal/model, trust, ui/theme, ui/safetext, ui/common and the other ui
// component packages, never session nor the root ui.
package screen

import (
	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
)

// Screen is one screen of the body.
type Screen interface {
	// KeyMap is the bindings that apply now, for the footer and the help.
	KeyMap() help.KeyMap
	// SetSize sets the outer size the screen draws in.
	SetSize(w, h int)
	// Update handles a key (or another message given to the screen on top) and
	// says what the root is to do next; nil asks for nothing.
	Update(msg tea.Msg) (Intent, tea.Cmd)
	// View draws the screen at exactly its size.
	View() string
}

// Intent is what a screen asks the root to do. The intents every screen may
// return are declared here; a screen declares its own next to it, and the
// root switches on their types.
type Intent any

// Back returns to the screen under this one.
type Back struct{}
