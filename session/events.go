package session

import (
	"context"
	"sync"

	"github.com/airlock-mcp/airlock/internal/model"
)

// maxQueued bounds the event queue. Log lines and progress beyond it are dropped and
// counted; status and approval events are always kept (they are few and must not be
// lost).
const maxQueued = 4096

// queue is an unbounded-for-important, bounded-for-chatty event queue with a blocking
// Next. It never blocks a producer, so a slow UI cannot stall a server's reader.
type queue struct {
	mu      sync.Mutex
	items   []model.Event
	dropped int
	wake    chan struct{}
	closed  bool
}

func newQueue() *queue { return &queue{wake: make(chan struct{}, 1)} }

func (q *queue) push(e model.Event) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	switch e.(type) {
	case model.LogLine, model.Progress:
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
func (q *queue) next(ctx context.Context) (model.Event, bool) {
	for {
		q.mu.Lock()
		if q.dropped > 0 {
			d := q.dropped
			q.dropped = 0
			q.mu.Unlock()
			return model.Dropped{Count: d}, true
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
