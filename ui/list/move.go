// Package list is the one list component of airlock's screens (Model: a cursor
// over lines of which only some can be selected, headings between rows; the window
// offset that keeps the cursor and the rest of its entry in view; the scroll keys)
// and the arithmetic under it. The owner draws the lines: no styles, no session.
package list

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/airlock-mcp/airlock/ui/common"
)

// Move moves a cursor over n lines of which only some can be selected (the
// hazards and grants views: headings between rows), for the scroll keys. It returns
// the new cursor and whether k was one of the keys; a move that finds no selectable
// line keeps the cursor. page is how many lines a page holds.
func Move(k tea.KeyPressMsg, keys common.ScrollKeyMap, cursor, n, page int, selectable func(int) bool) (int, bool) {
	next := func(i, dir int) int {
		for ; i >= 0 && i < n; i += dir {
			if selectable(i) {
				return i
			}
		}
		return -1
	}
	to := -1
	switch {
	case key.Matches(k, keys.Up):
		to = next(cursor-1, -1)
	case key.Matches(k, keys.Down):
		to = next(cursor+1, 1)
	case key.Matches(k, keys.PageUp):
		if to = next(max(cursor-page, 0), 1); to >= cursor {
			to = next(0, 1)
		}
	case key.Matches(k, keys.PageDown):
		if to = next(min(cursor+page, n-1), -1); to <= cursor {
			to = next(n-1, -1)
		}
	case key.Matches(k, keys.Top):
		to = next(0, 1)
	case key.Matches(k, keys.Bottom):
		to = next(n-1, -1)
	default:
		return cursor, false
	}
	if to < 0 {
		return cursor, true
	}
	return to, true
}

// NextSelectable is the first index of a list of n lines, from i stepping by dir,
// that sel accepts; -1 when none does.
func NextSelectable(n, i, dir int, sel func(int) bool) int {
	for ; i >= 0 && i < n; i += dir {
		if sel(i) {
			return i
		}
	}
	return -1
}

// ScrollTo is the offset of a window of visible lines over total lines that shows
// the cursor and the tail lines after it (the rest of its entry); at the first
// selectable line the window goes to the top, so the first heading stays in view.
func ScrollTo(offset, cursor, first, visible, total, tail int) int {
	if cursor >= 0 {
		if cursor < offset {
			offset = cursor
		}
		if cursor+tail >= offset+visible {
			offset = cursor + tail - visible + 1
		}
		if cursor == first {
			offset = 0
		}
	}
	return min(max(offset, 0), max(total-visible, 0))
}
