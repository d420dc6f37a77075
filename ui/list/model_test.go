package list

import (
	"strconv"
	"testing"

	"github.com/airlock-mcp/airlock/ui/internal/keytest"
)

// The list skips headings, pages, goes home and to the end, keeps its window
// over the cursor, and keeps the cursor on the same key across new rows.
func TestModel_MovesOverSelectableLinesAndKeepsTheKey(t *testing.T) {
	m := New()
	heading := func(i int) bool { return i%5 != 0 } // 0, 5, 10... are headings
	m.SetRows(20, heading)
	m.SetVisible(4)
	m.Cursor = m.First()
	m.ScrollTo(0)
	if m.Cursor != 1 || m.Offset() != 0 {
		t.Fatalf("start: cursor %d offset %d, want 1 0", m.Cursor, m.Offset())
	}
	for _, step := range []struct {
		key            string
		cursor, offset int
	}{
		{"down", 2, 0}, {"down", 3, 0}, {"down", 4, 1}, {"down", 6, 3},
		{"up", 4, 3}, {"end", 19, 16}, {"x", 19, 16}, {"home", 1, 0},
		{"pgdown", 4, 1}, {"pgup", 1, 0},
	} {
		if !m.Update(keytest.Press(step.key)) && step.key != "x" {
			t.Fatalf("%s: not a list key", step.key)
		}
		m.ScrollTo(0)
		if m.Cursor != step.cursor || m.Offset() != step.offset {
			t.Fatalf("%s: cursor %d offset %d, want %d %d", step.key, m.Cursor, m.Offset(), step.cursor, step.offset)
		}
	}
	m.EnableKeys()
	if m.Keys.Up.Enabled() || !m.Keys.Down.Enabled() {
		t.Fatal("at the first row only the moves down are offered")
	}
	m.Cursor = 7
	keyOf := func(i int) string { return strconv.Itoa(i) }
	m.SetRows(30, heading)
	if !m.Keep("8", keyOf) || m.Cursor != 8 {
		t.Fatalf("keep: cursor %d, want 8", m.Cursor)
	}
	if m.Keep("10", keyOf) || m.Cursor != 8 {
		t.Fatalf("a heading's key is not kept: cursor %d", m.Cursor)
	}
}
