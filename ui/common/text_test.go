package common

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A server name of two cells is kept whole: "f…" is as wide as "fs" and reads as
// a longer server whose name was hidden.
func TestCutName_KeepsAShortServerWhole(t *testing.T) {
	for _, c := range []struct {
		name  string
		width int
		want  string
	}{
		{"fs__list_allowed_directories", 22, "fs__list_all…rectories"},
		{"fs__list_directory_with_sizes", 22, "fs__list_dir…ith_sizes"},
		{"x__list_directory_with_sizes", 22, "x__list_dire…ith_sizes"},
		{"memory__create_entities", 22, "memo…__create_entities"},
	} {
		if got := CutName(c.name, c.width); got != c.want || ansi.StringWidth(got) > c.width {
			t.Errorf("CutName(%q, %d) = %q, want %q", c.name, c.width, got, c.want)
		}
	}
}
