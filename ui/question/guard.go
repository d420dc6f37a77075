// Package question is the one overlay that owns every question airlock asks the
// person: approval dialogs (ui/dialog), servers' requests for input (the
// elicitation form of ui/form), the quit question and accepting a changed tool
// definition. It is pure like ui/dialog: keys in, an Outcome value out; the root
// carries the outcome out.
//
// Every question goes through one input guard (docs/approval.md):
//
//   - A question never takes a key typed before the person could see it. Once it
//     is on screen it ignores input until the keyboard has been idle for Quiet
//     (at least 500 ms); any key during that time restarts the wait. While it
//     waits it says so ("arming… keys are ignored"). Scroll keys still scroll.
//   - Each question arms afresh when it reaches the front: the key stream that
//     answered one never answers the next.
//   - A question that arrives while the person types (a form, the filter, another
//     question) does not take focus. It waits behind a badge until the person
//     opens it (a) or, with nothing taking text, the keyboard has been idle for
//     Quiet. Questions the person caused (the own call's approval, quit,
//     accepting a definition) open at once, and still arm.
//
// Time comes from an injected clock and a tea.Tick that carries a generation, so
// a tick meant for an earlier question is ignored and tests move the clock by hand.
package question

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// MinQuiet is the shortest guard airlock accepts: ordinary typing pauses between
// words run to several hundred milliseconds (crush's 200 ms armed mid-sentence).
const MinQuiet = 500 * time.Millisecond

// TickMsg is the guard's timer. It carries the generation it was started for; a
// tick of an older generation is stale and ignored.
type TickMsg struct{ gen uint64 }

// guard is the timing state of the question at the front.
type guard struct {
	quiet time.Duration
	now   func() time.Time
	// gen counts the guard's restarts that invalidate outstanding ticks: a new
	// question at the front, a question shown or closed.
	gen uint64
	// ticking says a tick of gen is outstanding, so no second one is started.
	ticking bool
	// lastInput is when the person last pressed a key or pasted.
	lastInput time.Time
	// shownAt is when the front question was put on screen; zero while closed.
	shownAt time.Time
	armed   bool
	// unread reports keys typed but not read yet (SetUnread); nil: none known.
	unread func() bool
}

// idle is how long the keyboard has been quiet.
func (g *guard) idle() time.Duration {
	if g.lastInput.IsZero() {
		return g.quiet
	}
	return g.now().Sub(g.lastInput)
}

// restart invalidates every outstanding tick and disarms.
func (g *guard) restart() {
	g.gen++
	g.ticking = false
	g.armed = false
}

// tick starts the timer for d unless one of this generation is outstanding.
func (g *guard) tick(d time.Duration) tea.Cmd {
	if g.ticking {
		return nil
	}
	g.ticking = true
	gen := g.gen
	return tea.Tick(max(d, time.Millisecond), func(time.Time) tea.Msg { return TickMsg{gen: gen} })
}

// remaining is how long the shown question still has to wait before it arms:
// Quiet after the later of being shown and the last key.
func (g *guard) remaining() time.Duration {
	from := g.shownAt
	if g.lastInput.After(from) {
		from = g.lastInput
	}
	return g.quiet - g.now().Sub(from)
}

// unreadRecheck is how soon the guard looks again while typed keys wait unread.
const unreadRecheck = 20 * time.Millisecond

// SetUnread gives the guard a way to see keys typed but not yet read by the
// program (the terminal's input queue): on a busy machine they can wait there past
// the guard's timer, and read after it they would answer a question armed in the
// meantime. While f reports any, a waiting question does not open and an open one
// does not arm; once read, they restart the wait like any key. nil (the default)
// knows of none.
func (o *Overlay) SetUnread(f func() bool) { o.g.unread = f }

// keysUnread reports whether typed keys wait unread.
func (g *guard) keysUnread() bool { return g.unread != nil && g.unread() }
