package session

import (
	"context"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
)

// Hostile case 26, the queue itself: with nobody reading, log lines and progress beyond
// maxQueued are dropped and counted (the count comes first), while status events are
// always kept, so a flood from several servers at once cannot grow memory or hide a
// status change.
func TestHostile26_EventQueueBounded(t *testing.T) {
	q := newQueue()
	const flood = 3 * maxQueued
	for i := range flood {
		q.push(model.LogLine{Server: "noisy", Source: "stderr", Text: "line"})
		if i%2 == 0 {
			q.push(model.Progress{CallID: "c1", Progress: float64(i)})
		}
	}
	q.push(model.ServerChanged{Server: "noisy", Status: model.StatusFailed})
	if n := len(q.items); n != maxQueued+1 {
		t.Errorf("%d events queued after a flood of %d, want %d plus the status change", n, flood+flood/2, maxQueued)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	ev, _ := q.next(ctx)
	if d, ok := ev.(model.Dropped); !ok || d.Count != flood+flood/2-maxQueued {
		t.Errorf("first event %#v, want Dropped{%d}", ev, flood+flood/2-maxQueued)
	}
	var last model.Event
	for range maxQueued + 1 {
		last, _ = q.next(ctx)
	}
	if sc, ok := last.(model.ServerChanged); !ok || sc.Status != model.StatusFailed {
		t.Errorf("last event %#v, want the status change kept", last)
	}
}
