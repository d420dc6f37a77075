package session

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
)

// maxQueued bounds the event queue. Log lines and progress beyond it are dropped and
// counted; status and approval events are always kept (they are few and must not be
// lost).
const maxQueued = 4096

// maxQueuedHeld bounds the arguments and results held by the CallFinished events
// queued and not yet read (model.CallFinished.HeldBytes): beyond it an event keeps
// its summary and lets go of its arguments and result (Unkept), so a screen that
// falls behind (a terminal that stops reading) while agents go on calling does not
// grow memory by every call's payload.
const maxQueuedHeld = 32 << 20

// maxQueuedCalls bounds the finished calls queued and not yet read; past it the
// oldest quarter of them is let go and counted (model.Dropped.Calls). It is more than
// a screen keeps (the TUI's Activity list keeps 1,000 entries), so a screen that
// catches up lists the same calls it would have had they all been read.
const maxQueuedCalls = 1024

// listWake is how long a list-only event (model.ListOnly: a call's end, a log line)
// may wait before the queue's reader is woken for it; every other event wakes it at
// once, and takes the list-only ones queued before it along, in order. A busy
// gateway's calls then wake the reader (the TUI's pump) once per listWake, not once
// per call: each wake is a thread woken on the cores the calls themselves run on.
// The TUI gathers list-only events for longer than this anyway (its batch window).
var listWake = 10 * time.Millisecond

// queue is an unbounded-for-important, bounded-for-chatty event queue with a blocking
// Next. It never blocks a producer, so a slow UI cannot stall a server's reader.
type queue struct {
	mu      sync.Mutex
	items   []queued
	dropped int
	held    int // the sum of items' held
	calls   int // CallFinished events among items
	// droppedCalls counts the CallFinished events let go unread (maxQueuedCalls).
	droppedCalls int
	wake         chan struct{}
	closed       bool
	// later wakes the reader listWake after a list-only event found it not armed
	// (laterArmed); nil until the first one.
	later      *time.Timer
	laterArmed bool
}

// queued is one event and the bytes of arguments and result it holds.
type queued struct {
	ev   model.Event
	held int
}

func newQueue() *queue { return &queue{wake: make(chan struct{}, 1)} }

func (q *queue) push(ev model.Event) {
	held := 0
	if c, ok := ev.(model.CallFinished); ok {
		held = c.HeldBytes() // outside the lock: a result can be large
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	switch e := ev.(type) {
	case model.LogLine, model.Progress:
		if len(q.items) >= maxQueued {
			q.dropped++
			q.mu.Unlock()
			return
		}
	case model.CallFinished:
		if q.held+held > maxQueuedHeld {
			e.Args, e.Result, e.Unkept = nil, nil, true
			ev, held = e, 0
		}
	}
	q.held += held
	q.items = append(q.items, queued{ev, held})
	if _, ok := ev.(model.CallFinished); ok {
		if q.calls++; q.calls > maxQueuedCalls {
			q.letGoOldestCalls(maxQueuedCalls / 4)
		}
	}
	now := !model.ListOnly(ev)
	if !now && !q.laterArmed {
		q.laterArmed = true
		if q.later == nil {
			q.later = time.AfterFunc(listWake, q.wakeLater)
		} else {
			q.later.Reset(listWake)
		}
	}
	q.mu.Unlock()
	if now {
		q.signal()
	}
}

// wakeLater is the timer that wakes the reader for the list-only events queued
// since it was armed.
func (q *queue) wakeLater() {
	q.mu.Lock()
	q.laterArmed = false
	q.mu.Unlock()
	q.signal()
}

// signal wakes the reader, if it waits.
func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// letGoOldestCalls removes the n oldest CallFinished events from the queue and
// counts them (droppedCalls); every other event stays, in order. Called with mu
// held, once every n calls pushed past the bound, so a push costs O(1) amortized.
func (q *queue) letGoOldestCalls(n int) {
	kept := q.items[:0]
	for _, it := range q.items {
		if _, ok := it.ev.(model.CallFinished); ok && n > 0 {
			n--
			q.calls--
			q.droppedCalls++
			q.held -= it.held
			continue
		}
		kept = append(kept, it)
	}
	clear(q.items[len(kept):])
	q.items = kept
}

// next blocks until an event is queued, ctx ends (nil, false) or the queue closes.
func (q *queue) next(ctx context.Context) (model.Event, bool) {
	for {
		q.mu.Lock()
		if q.dropped > 0 || q.droppedCalls > 0 {
			d := model.Dropped{Count: q.dropped, Calls: q.droppedCalls}
			q.dropped, q.droppedCalls = 0, 0
			q.mu.Unlock()
			return d, true
		}
		if len(q.items) > 0 {
			e := q.items[0].ev
			q.held -= q.items[0].held
			if _, ok := e.(model.CallFinished); ok {
				q.calls--
			}
			q.items[0] = queued{}
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
	if q.later != nil {
		q.later.Stop()
	}
	q.mu.Unlock()
	q.signal()
}

// callFinished builds the event of one call from what Call returned.
func callFinished(req model.CallRequest, snap *model.Snapshot, start, end time.Time, out *Outcome, err error) model.CallFinished {
	e := model.CallFinished{
		Client: req.Client, Context: req.Context, Server: req.Server, Tool: req.Tool,
		Args: req.Args, At: start, Duration: end.Sub(start),
	}
	if len(e.Args) == 0 {
		e.Args = json.RawMessage("{}")
	}
	if t, ok := snap.Tool(req.Server, req.Tool); ok {
		e.Tier = t.Class.Tier.String()
	}
	if out != nil {
		e.CallID, e.Result, e.Ran = out.CallID, out.Result, out.Duration
		e.DecidedBy, e.Reasons, e.Rule = string(out.Verdict.By), out.Verdict.Reasons, out.Rule
		if out.Verdict.Action == trust.Allow {
			e.Decision = "allow"
		}
	}
	var denied *model.DeniedError
	var withdrawn *model.WithdrawnError
	switch {
	case errors.As(err, &denied):
		e.Decision, e.DecidedBy, e.Reasons, e.Reason, e.Rule = "deny", string(denied.Verdict.By), denied.Verdict.Reasons, denied.Reason, denied.Rule
		e.Outcome, e.Err = "denied", err.Error()
	case errors.Is(err, model.ErrAgentGone):
		// Not decided by anyone: the agent left while it waited. Why it asked is kept.
		e.DecidedBy, e.Outcome, e.Err = string(trust.DecidedByAgentGone), "agent-gone", err.Error()
		if errors.As(err, &withdrawn) {
			e.Reasons = withdrawn.Verdict.Reasons
		}
	case errors.As(err, &withdrawn):
		// Not decided: the caller withdrew it while it waited. Why it asked is kept.
		e.DecidedBy, e.Reasons = string(withdrawn.Verdict.By), withdrawn.Verdict.Reasons
		e.Outcome, e.Err = "cancelled", err.Error()
	case errors.Is(err, context.Canceled):
		e.Outcome, e.Err = "cancelled", err.Error()
	case errors.Is(err, model.ErrResultSchema):
		e.Outcome, e.Err = "result-invalid", err.Error()
	case err != nil:
		e.Outcome, e.Err = "failed", err.Error()
	case out == nil || out.Result == nil:
		e.Outcome = "failed"
	case out.Result.IsError:
		e.Outcome = "tool-error"
	default:
		e.Outcome = "ok"
	}
	return e
}

// AuditProblem is what is wrong with the audit log now (audit.Log.Problem), or nil
// when nothing is, or there is no audit log. While it is a damage or a failed write,
// every call that needs a record is denied; a head file that could not be written
// (audit.ErrHeadNotWritten) or a damaged old record is a notice, and calls go on.
func (m *Manager) AuditProblem() error {
	if m.opts.Audit == nil {
		return nil
	}
	return m.opts.Audit.Problem()
}

// watchAudit reports each change of the audit log's problem as an AuditChanged event.
func (m *Manager) watchAudit() {
	m.opts.Audit.OnProblem(func() { m.events.push(model.AuditChanged{}) })
}
