package ui

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"github.com/airlock-mcp/airlock/ui/screens/helpview"
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

// The help overlay's approval dialog section reads as a reference: each key says
// what it does and when, none is cut ("any other…") or marked "(not now)" in a
// list meant to show every key, and ↓ is not labelled "↑/↓".
func TestHelp_ApprovalDialogKeysReadWhole(t *testing.T) {
	h := newHarness(t, 120, 40, false)
	var rows []string
	for _, sec := range h.m.helpSections() {
		if sec.Title != "Approval dialog" {
			continue
		}
		content := ansi.Strip(helpview.Content(h.m.St, []helpview.Section{sec}, 120))
		rows = strings.Split(content, "\n")
	}
	if len(rows) == 0 {
		t.Fatal("no Approval dialog section in help")
	}
	text := strings.Join(rows, "\n")
	for _, bad := range []string{"(not now)", "…", "↑/↓        scroll"} {
		if strings.Contains(text, bad) {
			t.Errorf("the help's approval section has %q:\n%s", bad, text)
		}
	}
	for _, want := range []string{"scroll down", "in the reason field", "in the rule editor"} {
		if !strings.Contains(text, want) {
			t.Errorf("the help's approval section lacks %q:\n%s", want, text)
		}
	}
}
