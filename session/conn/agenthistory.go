package conn

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
)

// The bounds of the agent sessions' histories: at most AgentHistoriesLive sessions
// are kept while they run (beyond it the oldest is kept as ended), and the last
// AgentHistoriesEnded ended ones; each keeps its newest AgentHistoryMessages
// messages, at most AgentHistoryBytes of them (each message cut at
// HistoryMessageBytes, as a server's). A server's bounds are 4 MiB because there
// are a few servers; agent sessions may be many (50 sessions at a server's bounds
// took the gateway from 48 MB to 136 MB), so all of them together hold at most
// 18 MiB, about the last 60 calls of each when a call's answer is 4 KB.
const (
	AgentHistoriesLive   = 64
	AgentHistoriesEnded  = 8
	AgentHistoryMessages = 200
	AgentHistoryBytes    = 256 << 10
)

// AgentHistories keeps the protocol history of each agent session at the gateway:
// what the agent sent airlock and what airlock answered, in the same ring a server's
// history uses, keyed by the session's id. Safe for concurrent use; a nil
// *AgentHistories keeps nothing.
type AgentHistories struct {
	mu    sync.Mutex
	now   func() time.Time
	n     int // sessions opened, for their numbers
	live  []*agentHistory
	ended []*agentHistory // oldest first
}

type agentHistory struct {
	key   string
	label string
	h     *History
	ended bool
	// opened is on the wall clock, whatever the histories' clock: EndAbsent's
	// grace is real time for the gateway to list a new session.
	opened time.Time
}

// NewAgentHistories returns an empty set; now is its clock (time.Now when nil).
func NewAgentHistories(now func() time.Time) *AgentHistories {
	return &AgentHistories{now: now}
}

// Open starts the history of the agent session id (client is its client name,
// ctxName its context), or returns it when already open.
func (a *AgentHistories) Open(id, client, ctxName string) *History {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if i := a.liveAt(id); i >= 0 {
		return a.live[i].h
	}
	if len(a.live) == AgentHistoriesLive {
		a.endAt(0)
	}
	a.n++
	e := &agentHistory{key: id, label: "session " + strconv.Itoa(a.n) + " · " + client + " · " + ctxName, h: newHistory(a.now, AgentHistoryMessages, AgentHistoryBytes), opened: time.Now()}
	a.live = append(a.live, e)
	return e.h
}

// Of is the history of a running agent session, nil when it has none.
func (a *AgentHistories) Of(id string) *History {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if i := a.liveAt(id); i >= 0 {
		return a.live[i].h
	}
	return nil
}

// End marks the session ended: its history is kept among the last
// AgentHistoriesEnded ended ones.
func (a *AgentHistories) End(id string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if i := a.liveAt(id); i >= 0 {
		a.endAt(i)
	}
}

// liveAt is the index of the running session id in live, -1 when it is not
// running. Called with a.mu held.
func (a *AgentHistories) liveAt(id string) int {
	for i, e := range a.live {
		if e.key == id {
			return i
		}
	}
	return -1
}

// EndAbsent ends the running sessions not in present that opened more than grace
// ago (a session being opened may not be listed yet).
func (a *AgentHistories) EndAbsent(present map[string]bool, grace time.Duration) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := len(a.live) - 1; i >= 0; i-- {
		if e := a.live[i]; !present[e.key] && time.Since(e.opened) > grace {
			a.endAt(i)
		}
	}
}

// endAt moves live[i] to the ended ones. Called with a.mu held.
func (a *AgentHistories) endAt(i int) {
	e := a.live[i]
	a.live = append(a.live[:i], a.live[i+1:]...)
	e.ended = true
	a.ended = append(a.ended, e)
	if len(a.ended) > AgentHistoriesEnded {
		a.ended[0] = nil
		a.ended = a.ended[1:]
	}
}

// Sources lists the sessions kept: the ended ones, oldest first, then the running
// ones in the order they opened.
func (a *AgentHistories) Sources() []model.HistorySource {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]model.HistorySource, 0, len(a.ended)+len(a.live))
	for _, e := range append(append([]*agentHistory(nil), a.ended...), a.live...) {
		out = append(out, model.HistorySource{Key: e.key, Label: e.label, Ended: e.ended})
	}
	return out
}

// Snapshot is the kept history of the session key (Agent set, Server its label);
// an empty history when it is not kept.
func (a *AgentHistories) Snapshot(key string) model.History {
	if a == nil {
		return model.History{Agent: key}
	}
	a.mu.Lock()
	var found *agentHistory
	for _, e := range append(append([]*agentHistory(nil), a.ended...), a.live...) {
		if e.key == key {
			found = e
		}
	}
	a.mu.Unlock()
	if found == nil {
		return model.History{Agent: key}
	}
	h := found.h.Snapshot()
	h.Server, h.Agent, h.Ended = found.label, key, found.ended
	return h
}

// Tap follows one response body of the gateway as it is written, keeping each
// JSON-RPC message in it: an event stream event by event, a JSON body at Close.
type Tap struct {
	h     *History
	sse   bool
	split sseSplit
	buf   []byte
	over  bool
}

// NewTap returns a tap into h (nil: a tap that keeps nothing) for a body of
// contentType.
func (h *History) NewTap(contentType string) *Tap {
	return &Tap{h: h, sse: strings.HasPrefix(contentType, "text/event-stream")}
}

// Write reads p as written to the agent.
func (t *Tap) Write(p []byte) {
	if t == nil || t.h == nil {
		return
	}
	if t.sse {
		t.split.feed(p, func(data []byte) { t.h.Add(true, data) })
		return
	}
	if len(t.buf)+len(p) > MaxMessageBytes {
		t.over = true
		return
	}
	t.buf = append(t.buf, p...)
}

// Close keeps a JSON body's message.
func (t *Tap) Close() {
	if t == nil || t.h == nil || t.sse || t.over || len(t.buf) == 0 {
		return
	}
	t.h.Add(true, t.buf)
	t.buf = nil
}
