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

// WrapWords breaks at spaces only: a hyphenated name that fits a line stays
// whole; one longer than the width is broken, at a hyphen where it can be.
func TestWrapWords_SpacesOnly(t *testing.T) {
	for _, c := range []struct {
		s     string
		width int
		want  []string
	}{
		{"taint from everything__trigger-long-running-operation (call c5)", 44, []string{"taint from", "everything__trigger-long-running-operation", "(call c5)"}},
		{"agent claude-code", 14, []string{"agent", "claude-code"}},
		{"everything__trigger-long-running-operation", 30, []string{"everything__trigger-long-", "running-operation"}},
	} {
		got := WrapWords(c.s, c.width)
		if len(got) != len(c.want) {
			t.Errorf("WrapWords(%q, %d) = %q, want %q", c.s, c.width, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("WrapWords(%q, %d) = %q, want %q", c.s, c.width, got, c.want)
				break
			}
		}
	}
}
