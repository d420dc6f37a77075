// Package keytest is test support for the UI packages' Update-level tests: the key
// presses a terminal sends, by name, and a check that a view fits its size. It holds
// no state.
package keytest

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

var named = map[string]tea.KeyPressMsg{
	"enter":     {Code: tea.KeyEnter},
	"esc":       {Code: tea.KeyEscape},
	"tab":       {Code: tea.KeyTab},
	"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift},
	"left":      {Code: tea.KeyLeft},
	"right":     {Code: tea.KeyRight},
	"up":        {Code: tea.KeyUp},
	"down":      {Code: tea.KeyDown},
	"pgup":      {Code: tea.KeyPgUp},
	"pgdown":    {Code: tea.KeyPgDown},
	"home":      {Code: tea.KeyHome},
	"end":       {Code: tea.KeyEnd},
	"space":     {Code: tea.KeySpace, Text: " "},
	"backspace": {Code: tea.KeyBackspace},
}

// Press returns the key press for a name such as "o", "enter", "shift+tab", "esc",
// "space" or "ctrl+s"; a single rune is typed as itself. Any other name panics, so a
// misspelt key fails the test instead of typing text.
func Press(name string) tea.KeyPressMsg {
	if k, ok := named[name]; ok {
		return k
	}
	if len(name) == 6 && name[:5] == "ctrl+" {
		return tea.KeyPressMsg{Code: rune(name[5]), Mod: tea.ModCtrl}
	}
	r := []rune(name)
	if len(r) != 1 {
		panic("keytest: unknown key " + name)
	}
	return tea.KeyPressMsg{Code: r[0], Text: name}
}

// Type turns text into one key press per rune.
func Type(s string) []tea.Msg {
	msgs := make([]tea.Msg, 0, len(s))
	for _, r := range s {
		msgs = append(msgs, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return msgs
}

// Fits fails t when view is taller than h lines or any line is wider than w cells;
// what names the case in the message.
func Fits(t testing.TB, view string, w, h int, what string) {
	t.Helper()
	ls := strings.Split(view, "\n")
	if len(ls) > h {
		t.Errorf("%s %dx%d: %d lines, want at most %d", what, w, h, len(ls), h)
	}
	for i, l := range ls {
		if width := lipgloss.Width(l); width > w {
			t.Errorf("%s %dx%d: line %d is %d wide: %q", what, w, h, i, width, ansi.Strip(l))
		}
	}
}
