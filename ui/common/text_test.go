package common

import (
	"strings"
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

// Every line WrapOwn makes fits the width, its hanging indent counted: a
// continuation indented more than the first line is wrapped narrower, so the
// pane does not cut its last cells (a path's end) off with an ellipsis.
func TestWrapOwn_EveryLineFits(t *testing.T) {
	path := `"/tmp/abcdefgh/TestServerInfo_EditRoots2573849084/001/missing" does not exist`
	for _, c := range []struct{ first, rest string }{
		{"", "  "}, {"• ", "  "}, {"label  ", "    "}, {"  ", strings.Repeat(" ", 13)},
	} {
		// Below 8 cells beside the indent, WrapOwn keeps 8 (words over a pane's cut
		// read better than a column of letters).
		for width := max(len(c.first), len(c.rest)) + 8; width <= 80; width++ {
			lines := WrapOwn("✗ "+path, width, c.first, c.rest)
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > width {
					t.Fatalf("WrapOwn(first %q, rest %q) at %d: line %d is %d cells: %q", c.first, c.rest, width, i, w, l)
				}
			}
			if got := strings.Join(strings.Fields(strings.Join(lines, "")), ""); got != strings.Join(strings.Fields(c.first+"✗ "+path), "") {
				t.Fatalf("WrapOwn at %d lost text: %q", width, lines)
			}
		}
	}
}
