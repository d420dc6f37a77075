package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// Calls nobody reads (a screen that fell behind while agents go on calling) hold at
// most maxQueuedHeld of arguments and results: each event beyond it keeps its
// summary and says its payload was not kept, and once the queue is read, new events
// keep theirs again. Measured on the heap, not only on the queue's own count.
func TestQueue_UnreadCallsHoldBoundedMemory(t *testing.T) {
	const calls, size = 200, 1 << 20 // 200 calls, each 1 MiB of arguments and 1 MiB of result
	call := func(i int) model.CallFinished {
		args := append([]byte(`{"body":"`), bytes.Repeat([]byte{'a' + byte(i%26)}, size)...)
		return model.CallFinished{
			Server: "files", Tool: "write", Decision: "allow", Outcome: "ok",
			Args:   json.RawMessage(append(args, `"}`...)),
			Result: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("r", size)}}},
		}
	}
	before := heapInUse()
	q := newQueue()
	for i := range calls {
		q.push(call(i))
	}
	grew := heapInUse() - before
	t.Logf("%d unread calls of 2 MiB each: %d MiB of heap, %d MiB counted held", calls, grew>>20, q.held>>20)
	if grew > 2*maxQueuedHeld {
		t.Errorf("%d unread calls of 2 MiB each hold %d MiB of heap, want at most %d MiB", calls, grew>>20, 2*maxQueuedHeld>>20)
	}
	if q.held > maxQueuedHeld {
		t.Errorf("queue counts %d bytes held, over its bound %d", q.held, maxQueuedHeld)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var kept, unkept int
	for range calls {
		ev, _ := q.next(ctx)
		c, ok := ev.(model.CallFinished)
		if !ok {
			t.Fatalf("event %#v, want a CallFinished", ev)
		}
		if c.Server != "files" || c.Tool != "write" || c.Decision != "allow" || c.Outcome != "ok" {
			t.Errorf("summary lost: %+v", c)
		}
		switch {
		case c.Unkept && c.Args == nil && c.Result == nil:
			unkept++
		case !c.Unkept && len(c.Args) > size && c.Result != nil:
			kept++
		default:
			t.Errorf("event half kept: Unkept %v, %d bytes of arguments, result %v", c.Unkept, len(c.Args), c.Result != nil)
		}
	}
	if kept == 0 || unkept == 0 || kept+unkept != calls {
		t.Errorf("%d kept, %d not kept, of %d", kept, unkept, calls)
	}
	if q.held != 0 {
		t.Errorf("queue counts %d bytes held after every event was read", q.held)
	}
	q.push(call(0))
	if ev, _ := q.next(ctx); ev.(model.CallFinished).Unkept {
		t.Error("a call pushed after the queue was read did not keep its payload")
	}
}

// heapInUse is the heap in use after a collection.
func heapInUse() int {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int(ms.HeapInuse)
}

// Calls nobody reads are bounded in number too, not only in payload: a summary is a
// few hundred bytes, and a thousand calls a second for an hour behind a terminal that
// stopped reading would otherwise queue gigabytes. Past maxQueuedCalls the oldest
// quarter of the unread calls is let go and counted; the count comes first, the
// newest calls follow in order, and the status events among them are all kept.
func TestQueue_UnreadCallsAreBoundedInNumber(t *testing.T) {
	const calls = 50 * maxQueuedCalls
	call := func(i int) model.CallFinished {
		return model.CallFinished{
			Server: "docs", Tool: "get_doc", Decision: "allow", Outcome: "ok", CallID: strconv.Itoa(i),
			Reasons: []string{"trusted server, read-only tool: " + strings.Repeat("x", 200)},
			Args:    json.RawMessage(`{"id":"` + strconv.Itoa(i) + `"}`),
		}
	}
	before := heapInUse()
	q := newQueue()
	for i := range calls {
		q.push(call(i))
		if i%(calls/4) == 0 {
			q.push(model.ServerChanged{Server: "docs", Status: model.StatusReady, Gen: uint64(i)})
		}
	}
	grew := heapInUse() - before
	t.Logf("%d unread calls: %d events queued, %d KiB of heap", calls, len(q.items), grew>>10)
	if n := len(q.items); n > maxQueuedCalls+4 {
		t.Errorf("%d events queued after %d unread calls, want at most %d calls and the 4 status changes", n, calls, maxQueuedCalls)
	}
	if limit := maxQueuedCalls * 2 << 10; grew > limit {
		t.Errorf("%d unread calls hold %d KiB of heap, want at most %d KiB", calls, grew>>10, limit>>10)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	ev, _ := q.next(ctx)
	d, ok := ev.(model.Dropped)
	if !ok || d.Calls == 0 || d.Count != 0 {
		t.Fatalf("first event %#v, want Dropped counting the calls let go", ev)
	}
	var statuses, kept int
	last := -1
	for {
		ev, ok := q.next(ctx)
		if !ok {
			break
		}
		switch e := ev.(type) {
		case model.ServerChanged:
			statuses++
		case model.CallFinished:
			i, _ := strconv.Atoi(e.CallID)
			if i <= last {
				t.Fatalf("call %d after call %d: out of order", i, last)
			}
			last = i
			kept++
		default:
			t.Fatalf("unexpected event %#v", ev)
		}
		if len(q.items) == 0 {
			break
		}
	}
	if statuses != 4 {
		t.Errorf("%d status changes read, want all 4 kept", statuses)
	}
	if d.Calls+kept != calls || last != calls-1 {
		t.Errorf("%d let go + %d read = %d, want %d, the newest (%d) last; last read %d", d.Calls, kept, d.Calls+kept, calls, calls-1, last)
	}
	if q.calls != 0 {
		t.Errorf("queue counts %d calls after every event was read", q.calls)
	}
}

// A reader blocked in next is woken for list-only events (a call's end, a log line)
// once listWake after the first of them, with all of them, in order; any other event
// wakes it at once and brings the list-only ones queued before it along. So a busy
// gateway's calls do not wake the TUI's pump once each.
func TestQueue_ListOnlyEventsWakeTheReaderOncePerListWake(t *testing.T) {
	// A wake that waits an hour: only another event, or the reader's own deadline,
	// can end its wait.
	defer func(d time.Duration) { listWake = d }(listWake)
	listWake = time.Hour
	q := newQueue()
	defer q.close()
	q.push(model.CallFinished{Server: "docs", Tool: "get_doc", Outcome: "ok"})
	q.push(model.LogLine{Server: "docs", Source: "stderr", Text: "served"})
	// The reader does not wait when events are queued: both are there at once.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	for _, want := range []string{"model.CallFinished", "model.LogLine"} {
		if ev, ok := q.next(ctx); !ok || typeName(ev) != want {
			t.Fatalf("next = %#v, %v; want a %s", ev, ok, want)
		}
	}
	// A reader already waiting is not woken by a list-only event within the hour.
	got := make(chan model.Event, 8)
	go func() {
		rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer rcancel()
		for {
			ev, ok := q.next(rctx)
			if !ok {
				close(got)
				return
			}
			got <- ev
		}
	}()
	time.Sleep(20 * time.Millisecond) // the reader waits in next
	for i := range 50 {
		q.push(model.CallFinished{Server: "docs", Tool: "get_doc", Outcome: "ok", CallID: strconv.Itoa(i)})
	}
	select {
	case ev := <-got:
		t.Fatalf("a list-only event woke the waiting reader at once: %#v", ev)
	case <-time.After(100 * time.Millisecond):
	}
	// A question wakes it at once, after the calls queued before it.
	q.push(model.ServerChanged{Server: "docs", Status: model.StatusReady})
	for i := range 51 {
		select {
		case ev := <-got:
			if i < 50 {
				if c, ok := ev.(model.CallFinished); !ok || c.CallID != strconv.Itoa(i) {
					t.Fatalf("event %d = %#v, want call %d", i, ev, i)
				}
			} else if _, ok := ev.(model.ServerChanged); !ok {
				t.Fatalf("event %d = %#v, want the status change last", i, ev)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("the status change did not wake the reader (%d events read)", i)
		}
	}
	// With the ordinary wake, a list-only event reaches a waiting reader by itself.
	listWake = 5 * time.Millisecond
	q2 := newQueue()
	defer q2.close()
	done := make(chan model.Event, 1)
	go func() {
		ev, _ := q2.next(context.Background())
		done <- ev
	}()
	time.Sleep(20 * time.Millisecond)
	q2.push(model.CallFinished{Server: "docs", Tool: "get_doc", Outcome: "ok"})
	select {
	case ev := <-done:
		if _, ok := ev.(model.CallFinished); !ok {
			t.Fatalf("next = %#v, want the call", ev)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a call's end never reached the waiting reader")
	}
}

func typeName(ev model.Event) string { return fmt.Sprintf("%T", ev) }
