package ui

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"
)

type footerKeys []key.Binding

func (f footerKeys) ShortHelp() []key.Binding  { return f }
func (f footerKeys) FullHelp() [][]key.Binding { return [][]key.Binding{f} }

// The footer never cuts a binding mid-word: at a width where bubbles' help would
// add one more item than fits (its ellipsis does not fit either), whole bindings
// go from the end.
func TestFooter_NeverCutsABindingMidWord(t *testing.T) {
	b := func(k, d string) key.Binding { return key.NewBinding(key.WithKeys(k), key.WithHelp(k, d)) }
	keys := footerKeys{b("enter", "open"), b("c", "call"), b("/", "filter"), b("i", "info"), b("tab", "pane"), b("z", "hazards")}
	global := []key.Binding{b("?", "help"), b("q", "quit"), b("D", "demo")}
	full := ansi.Strip(help.New().ShortHelpView(append(append([]key.Binding(nil), keys...), global...)))
	for w := 20; w <= len(full)+2; w++ {
		h := help.New()
		h.SetWidth(w)
		out := ansi.Strip(footerView(h, keys, global))
		if ansi.StringWidth(out) > w {
			t.Fatalf("width %d: footer %q is %d wide", w, out, ansi.StringWidth(out))
		}
		for _, part := range strings.Split(strings.TrimSuffix(strings.TrimSuffix(out, "…"), " "), " • ") {
			if part != "" && !strings.Contains(full, part) {
				t.Fatalf("width %d: %q is cut (footer %q)", w, part, out)
			}
		}
	}
}
