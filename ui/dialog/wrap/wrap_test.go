package wrap

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/airlock-mcp/airlock/ui/safetext"
)

func TestGutterWrapsFirst(t *testing.T) {
	got := Gutter("abcdefgh\n✔ Approved by user\x1b[2J", 8, "│ ")
	want := []string{"│ abcdef", "│ gh", "│ ✔ Appr", "│ oved b", "│ y user", "│ ⟨ESC⟩[", "│ 2J"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Gutter (-want +got):\n%s", diff)
	}
}

func TestEscapedKeepsEveryCharacter(t *testing.T) {
	inputs := []string{
		"a  b   c    d",
		strings.Repeat("word ", 50),
		"漢字漢字漢字漢字漢字",
		"tab\there\u202e\x00\x9b end",
		"line one\n\nline three",
	}
	for _, in := range inputs {
		for _, width := range []int{1, 3, 7, 20} {
			lines := Escaped(in, width, nil)
			joined := strings.Join(lines, "")
			want := strings.ReplaceAll(safetext.Escape(strings.ReplaceAll(in, "\t", "    ")), "\n", "")
			if joined != want {
				t.Errorf("Escaped(%q, %d) lost text:\n got %q\nwant %q", in, width, joined, want)
			}
			for _, l := range lines {
				if w := lipgloss.Width(l); w > max(width, 2) {
					t.Errorf("Escaped(%q, %d): line %q is %d wide", in, width, l, w)
				}
			}
		}
	}
}

func TestStyledMarksSurviveBreaks(t *testing.T) {
	mark := func(s string) string { return "\x1b[7m" + s + "\x1b[m" }
	lines := GutterMarked("x\x1b\x1b\x1b\x1by", 6, "| ", mark)
	for _, l := range lines {
		if !strings.HasPrefix(l, "| ") {
			t.Errorf("line %q does not start with the gutter", l)
		}
		if strings.Count(l, "\x1b[7m") > 0 && !strings.HasSuffix(l, "\x1b[m") && !strings.Contains(l, "\x1b[m") {
			t.Errorf("line %q leaves the mark style open", l)
		}
	}
	if got := ansi.Strip(strings.Join(lines, "\n")); !strings.Contains(strings.ReplaceAll(got, "\n| ", ""), "x⟨ESC⟩⟨ESC⟩⟨ESC⟩⟨ESC⟩y") {
		t.Errorf("marks lost: %q", got)
	}
}

func TestInline(t *testing.T) {
	if got, want := Inline("a\nb\tc\x1b", nil), "a⟨LF⟩b⟨TAB⟩c⟨ESC⟩"; got != want {
		t.Errorf("Inline = %q, want %q", got, want)
	}
}

func TestHang(t *testing.T) {
	got := Hang("one two three four", 12, "- ")
	want := []string{"- one two", "  three four"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Hang (-want +got):\n%s", diff)
	}
	got = HangChars("abcdefghij", 6, "k: ")
	want = []string{"k: abc", "   def", "   ghi", "   j"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("HangChars (-want +got):\n%s", diff)
	}
}
