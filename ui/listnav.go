package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// listMove moves a cursor over n lines of which only some can be selected (the
// hazards and grants views: headings between rows), for the scroll keys. It returns
// the new cursor and whether k was one of the keys; a move that finds no selectable
// line keeps the cursor. page is how many lines a page holds.
func listMove(k tea.KeyPressMsg, keys ScrollKeyMap, cursor, n, page int, selectable func(int) bool) (int, bool) {
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
