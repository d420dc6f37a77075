package list

import "testing"

// ScrollTo keeps what each list view did before it was shared: the cursor and its
// entry's tail lines in view, the top when the cursor is on the first selectable
// line, the offset within the list. Compared against the views' former formulas.
func TestScrollTo_KeepsCursorAndTailInView(t *testing.T) {
	old := func(offset, cursor, first, n, total, tail int) int {
		if cursor >= 0 {
			if cursor < offset {
				offset = cursor
			}
			if cursor+tail >= offset+n {
				offset = cursor - n + tail + 1
			}
			if cursor == first {
				offset = 0
			}
		}
		return min(max(offset, 0), max(total-n, 0))
	}
	for _, tail := range []int{0, 2, 3} {
		for total := 0; total < 12; total++ {
			for n := 1; n < 8; n++ {
				for cursor := -1; cursor < total; cursor++ {
					for offset := -1; offset <= total; offset++ {
						got := ScrollTo(offset, cursor, 1, n, total, tail)
						if want := old(offset, cursor, 1, n, total, tail); got != want {
							t.Fatalf("scrollTo(%d, %d, 1, %d, %d, %d) = %d, want %d", offset, cursor, n, total, tail, got, want)
						}
						if cursor > 1 && cursor+tail < total && n > tail && (cursor < got || cursor+tail >= got+n) {
							t.Fatalf("cursor %d with tail %d is out of the window %d+%d", cursor, tail, got, n)
						}
					}
				}
			}
		}
	}
	sel := func(i int) bool { return i%3 == 1 }
	if got := NextSelectable(10, 0, 1, sel); got != 1 {
		t.Errorf("nextSelectable forward = %d, want 1", got)
	}
	if got := NextSelectable(10, 9, -1, sel); got != 7 {
		t.Errorf("nextSelectable backward = %d, want 7", got)
	}
	if got := NextSelectable(10, 0, 1, func(int) bool { return false }); got != -1 {
		t.Errorf("nextSelectable with nothing selectable = %d, want -1", got)
	}
}
