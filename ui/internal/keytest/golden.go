package keytest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
)

// WriteGolden writes got to the golden file at path, making its folder when there
// is none: what a test does under -update.
func WriteGolden(t testing.TB, path, got string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Golden compares got with the golden file at path and reports how they differ;
// with update set it rewrites the file instead.
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		WriteGolden(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// Flat is a view stripped of its styles as one line of words: the frame's
// characters (heavy or rounded) trimmed from each line and runs of spaces
// collapsed, so that a sentence wrapped over lines can be found.
func Flat(view string) string {
	var words []string
	for _, l := range strings.Split(ansi.Strip(view), "\n") {
		l = strings.Trim(l, "┃━┏┓┗┛│─╭╮╰╯ ")
		words = append(words, strings.Fields(l)...)
	}
	return strings.Join(words, " ")
}

// Run sends msgs in order to m through update and returns the model and the first
// action that is not the zero value. The commands returned are not run: a model
// tested this way needs none of them to reach a decision.
func Run[M any, A comparable](m M, update func(M, tea.Msg) (M, A, tea.Cmd), msgs ...tea.Msg) (M, A) {
	var none A
	for _, msg := range msgs {
		var a A
		m, a, _ = update(m, msg)
		if a != none {
			return m, a
		}
	}
	return m, none
}
