package session

import (
	"context"
	"sync"
)

// Event is something the session reports to whoever drives it (the TUI, the CLI).
// Every event names its server where it has one; events about a connection carry its
// generation so that a late event from a connection that was since replaced can be
// recognised as stale and dropped.
type Event interface{ event() }

// ServerChanged reports a server's status or tool list changed; read Snapshot for the
// new state.
type ServerChanged struct {
	Server string
	Gen    uint64
	Status Status
}

// LogLine is one line of a server's stderr or one logging notification. Text is raw
// server-controlled text: escape it before display.
type LogLine struct {
	Server string
	Source string // "stderr", "log:<level>", or "airlock" for airlock's own notes on the server
	Text   string
}

// ApprovalRequested reports a call that waits for a person.
type ApprovalRequested struct{ Pending *Pending }

// ApprovalClosed reports that a pending approval is no longer waiting (answered,
// timed out or withdrawn by its caller).
type ApprovalClosed struct {
	ID      uint64
	Outcome string
	// Stale is true when airlock withdrew the question because what it showed (the
	// tool's definition, tier, trust or policy) changed while it waited; Outcome then
	// says what changed. The call is denied.
	Stale bool
}

// Progress reports a progress notification for a running call.
type Progress struct {
	CallID string
	// Server is the server the call went to, the only one whose progress counts.
	Server   string
	Progress float64
	Total    float64
	Message  string
}

// Dropped reports that the event queue overflowed and Count log lines were dropped
// (they remain in each server's bounded stderr buffer).
type Dropped struct{ Count int }

func (ServerChanged) event()     {}
func (LogLine) event()           {}
func (ApprovalRequested) event() {}
func (ApprovalClosed) event()    {}
func (Progress) event()          {}
func (Dropped) event()           {}

// maxQueued bounds the event queue. Log lines and progress beyond it are dropped and
// counted; status and approval events are always kept (they are few and must not be
// lost).
const maxQueued = 4096

// queue is an unbounded-for-important, bounded-for-chatty event queue with a blocking
// Next. It never blocks a producer, so a slow UI cannot stall a server's reader.
type queue struct {
	mu      sync.Mutex
	items   []Event
	dropped int
	wake    chan struct{}
	closed  bool
}

func newQueue() *queue { return &queue{wake: make(chan struct{}, 1)} }

func (q *queue) push(e Event) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	switch e.(type) {
	case LogLine, Progress:
		if len(q.items) >= maxQueued {
			q.dropped++
			q.mu.Unlock()
			return
		}
	}
	q.items = append(q.items, e)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// next blocks until an event is queued, ctx ends (nil, false) or the queue closes.
func (q *queue) next(ctx context.Context) (Event, bool) {
	for {
		q.mu.Lock()
		if q.dropped > 0 {
			d := q.dropped
			q.dropped = 0
			q.mu.Unlock()
			return Dropped{Count: d}, true
		}
		if len(q.items) > 0 {
			e := q.items[0]
			q.items[0] = nil
			q.items = q.items[1:]
			q.mu.Unlock()
			return e, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-q.wake:
		case <-ctx.Done():
			return nil, false
		}
	}
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}
