package form

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestSuggestions_EscapedBoundedAndOnlySafeValuesTaken: suggestions are listed
// escaped and at most MaxSuggestionsShown ("… N more"); ctrl+n skips a value a
// text input cannot show as is (it would reach the terminal raw) and takes the
// next; the header says the form's verb; Focused and Values report the fields.
func TestSuggestions_EscapedBoundedAndOnlySafeValuesTaken(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"n":{"type":"integer"}},"required":["city"]}`)
	f := NewFor("get prompt ", "srv", "weather", schema, plain())
	f.SetSize(80, 24)
	if !strings.Contains(ansi.Strip(f.View()), "get prompt srv › weather") {
		t.Fatalf("header:\n%s", ansi.Strip(f.View()))
	}
	if f.KeyMap().Suggest.Enabled() {
		t.Fatal("ctrl+n is on without suggestions")
	}
	name, value, ok := f.Focused()
	if !ok || name != "city" || value != "" {
		t.Fatalf("Focused = %q %q %v", name, value, ok)
	}
	vals := []string{"\x1b[2Jevil", "Paris"}
	for i := range 10 {
		vals = append(vals, "c"+string(rune('a'+i)))
	}
	f.SetSuggestions("city", vals, true)
	view := ansi.Strip(f.View())
	if strings.Contains(view, "\x1b[2J") || !strings.Contains(view, "⟨ESC⟩[2Jevil · Paris") || !strings.Contains(view, "… 4 more") {
		t.Fatalf("suggestions:\n%q", view)
	}
	f, _, _ = f.Update(press("ctrl+n"))
	if _, v, _ := f.Focused(); v != "Paris" {
		t.Fatalf("ctrl+n took %q, want Paris (the unsafe value skipped)", v)
	}
	f, _, _ = f.Update(press("ctrl+n"))
	if _, v, _ := f.Focused(); v != "ca" {
		t.Fatalf("ctrl+n took %q, want ca", v)
	}
	if got := f.Values(); got["city"] != "ca" || len(got) != 1 {
		t.Fatalf("Values = %v", got)
	}
	f, _, _ = f.Update(press("tab"))
	if _, _, ok := f.Focused(); ok {
		t.Fatal("an integer field is reported as a text field for completions")
	}
	f, act, _ := f.Update(press("ctrl+s"))
	sub, ok := act.(Submit)
	if !ok || string(sub.Args) != `{"city":"ca"}` {
		t.Fatalf("submit = %#v", act)
	}
}
