// Package common holds what every screen of the terminal UI shares with the root:
// the styles of the current theme (Common), the one way server-controlled text is
// fitted into a row or a block (Inline, BlockLines, Fit, the name cutters), the
// bordered pane, and the scrolling keys and help-map adapter.
//
// It imports only ui/theme, ui/safetext and the charm libraries, never the root ui
// nor session: a screen in its own package can use all of it.
package common
