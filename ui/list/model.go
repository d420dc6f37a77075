package list

import (
	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/ui/common"
)

// Model is one list's state: a cursor over n lines of which only some can be
// selected, the window offset and the scroll keys that move it. The owner gives it
// the lines' count and which are selectable (SetRows) and the window's height
// (SetVisible) and draws the lines itself; the list keeps the cursor on a
// selectable line (or -1 when none is) and the offset within the lines.
type Model struct {
	Keys common.ScrollKeyMap
	// Cursor is the line under the cursor, -1 when none; an owner may set it
	// (to show a given row) and then scroll the window to it.
	Cursor int

	offset     int
	n, visible int
	sel        func(int) bool
}

// New is an empty list with the default scroll keys; its cursor is -1.
func New() Model {
	m := Model{Keys: common.DefaultScrollKeyMap(), Cursor: -1, visible: 1}
	m.SetRows(0, nil)
	return m
}

// SetRows sets the count of lines and which are selectable (nil: every line).
// The cursor is left where it is; Keep moves it, or the owner sets it.
func (m *Model) SetRows(n int, sel func(int) bool) {
	if sel == nil {
		sel = func(int) bool { return true }
	}
	m.n, m.sel = n, sel
}

// SetVisible sets how many lines the window shows (at least one).
func (m *Model) SetVisible(n int) { m.visible = max(n, 1) }

// Visible is how many lines the window shows.
func (m Model) Visible() int { return m.visible }

// Len is the count of lines.
func (m Model) Len() int { return m.n }

// Offset is the first visible line.
func (m Model) Offset() int { return m.offset }

// SetOffset sets the first visible line; ScrollTo brings it back in bounds.
func (m *Model) SetOffset(o int) { m.offset = o }

// End is one past the last visible line.
func (m Model) End() int { return min(m.offset+m.visible, m.n) }

// Selectable says whether line i can hold the cursor.
func (m Model) Selectable(i int) bool { return i >= 0 && i < m.n && m.sel(i) }

// Next is the first selectable line from i stepping by dir; -1 when none.
func (m Model) Next(i, dir int) int { return NextSelectable(m.n, i, dir, m.sel) }

// First and Last are the first and last selectable lines; -1 when none.
func (m Model) First() int { return m.Next(0, 1) }
func (m Model) Last() int  { return m.Next(m.n-1, -1) }

// Keep puts the cursor on the selectable line whose key is k (the last such);
// it says whether one was found and leaves the cursor as it was when none was.
func (m *Model) Keep(k string, keyOf func(int) string) bool {
	found := false
	for i := range m.n {
		if m.sel(i) && keyOf(i) == k {
			m.Cursor, found = i, true
		}
	}
	return found
}

// Update moves the cursor for a scroll key (up, down, page up and down, home,
// end) and says whether msg was one; the window is not scrolled (ScrollTo does).
func (m *Model) Update(msg tea.Msg) bool {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return false
	}
	to, ok := Move(k, m.Keys, m.Cursor, m.n, m.visible, m.sel)
	if ok {
		m.Cursor = to
	}
	return ok
}

// ScrollTo moves the window to show the cursor and the tail lines after it, the
// top when the cursor is on the first selectable line (see the function ScrollTo).
func (m *Model) ScrollTo(tail int) {
	m.offset = ScrollTo(m.offset, m.Cursor, m.First(), m.visible, m.n, tail)
}

// EnableKeys offers only the moves that do something: up while a selectable line
// is above the cursor, down while one is below it.
func (m *Model) EnableKeys() {
	m.Keys.Enable(m.Cursor > m.First(), m.Cursor >= 0 && m.Cursor < m.Last())
}
