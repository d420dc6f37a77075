package ui

// layout is every size the root hands out, computed in one place from the window
// size and the number of banner lines wanted. Children get their sizes from here
// through SetSize and never compute margins of their own.
type layout struct {
	width, height int

	// Fixed rows, top to bottom: title, risk banner, body, status line, help
	// footer, and the tour's caption (0 rows outside the tour).
	titleH, bannerH, bodyH, statusH, footerH, captionH int
	// stripH is the activity strip's row (0 until the first call).
	stripH int

	// serversW and toolsW are the outer widths of the two panes of the main view
	// (borders included); both are bodyH tall.
	serversW, toolsW int

	// modalW and modalH bound a dialog, a form or the help overlay.
	modalW, modalH int
}

// Minimum sizes below which airlock still draws, cramped, rather than failing.
const (
	minWidth  = 40
	minHeight = 12
)

// computeLayout splits a width x height window. bannerWant is the number of banner
// lines the session's hazards would like; the banner gets at most 2 lines on a
// short screen (so 80x24 keeps a usable body) and 4 on a tall one. captionH rows
// at the bottom hold the tour's caption; modals are laid out above them, so that
// the caption never hides a dialog.
func computeLayout(width, height, bannerWant, captionH int) layout {
	width, height = max(width, minWidth), max(height, minHeight)
	captionH = min(captionH, height/3)
	l := layout{width: width, height: height, titleH: 1, statusH: 1, footerH: 1, captionH: captionH}
	maxBanner := 2
	if height >= 36 {
		maxBanner = 4
	}
	l.bannerH = min(max(bannerWant, 1), maxBanner)
	l.bodyH = height - l.titleH - l.bannerH - l.statusH - l.footerH - l.captionH
	l.serversW = min(max(width/3, 26), 40)
	l.toolsW = width - l.serversW
	l.modalW = min(width-2, 100)
	l.modalH = height - 2 - l.captionH
	return l
}

// followServers sizes the servers pane to its content (want is the outer width
// its widest row needs) within bounds: at least 22 columns, at most two fifths of
// the window (and 48 columns), so that no column is left blank while the tools
// pane cuts names, and the tools pane always keeps the larger part.
func (l *layout) followServers(want int) {
	lo := 22
	hi := max(min(l.width*2/5, 48), lo)
	l.serversW = min(max(want, lo), hi)
	l.toolsW = l.width - l.serversW
}
