package ui

// Screen navigation is one stack: opening a screen pushes the one it was opened
// from, back pops it, so esc retraces every step however the screens were
// reached (details → hazards → details of another tool → logs, and back). The
// call form, the running call and its result take one place on the stack: the
// call replaces its form and the result replaces the call, so back from a result
// returns to where the form was opened.

// maxNav bounds the stack; the oldest steps are forgotten first (back then ends
// on the main screen).
const maxNav = 32

// push opens s over the current screen.
func (m *Model) push(s screen) {
	if s == m.screen {
		return
	}
	m.nav = append(m.nav, m.screen)
	if len(m.nav) > maxNav {
		m.nav = append([]screen(nil), m.nav[len(m.nav)-maxNav:]...)
	}
	m.screen = s
}

// pop returns to the screen under the current one (the main screen at the bottom).
func (m *Model) pop() {
	m.screen = m.under()
	if n := len(m.nav); n > 0 {
		m.nav = m.nav[:n-1]
	}
}

// under is the screen back returns to.
func (m *Model) under() screen {
	if n := len(m.nav); n > 0 {
		return m.nav[n-1]
	}
	return screenMain
}
