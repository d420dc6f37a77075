package gateway

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
)

// sessionLife ends the agent sessions nobody uses any more (Options.
// SessionIdleTimeout). A session is in use while a request of it is in flight: a call,
// one waiting for a person, or the event stream (GET) an agent keeps open between
// calls. go-sdk's own SessionTimeout counts only requests, so it would end the
// session of an agent that is merely thinking with its stream open; this counts the
// stream too. A session with nothing in flight for the timeout is closed: its agent
// vanished (crashed, slept) and its TCP connections are gone, or it holds no stream
// and then, asking again, is told its session is gone (HTTP 404) and starts a new one
// as the MCP specification requires.
type sessionLife struct {
	timeout time.Duration
	now     func() time.Time

	mu   sync.Mutex
	open map[string]int       // requests in flight, by Mcp-Session-Id
	last map[string]time.Time // when the session was last in use
}

func newSessionLife(timeout time.Duration, now func() time.Time) *sessionLife {
	return &sessionLife{timeout: timeout, now: now, open: map[string]int{}, last: map[string]time.Time{}}
}

// serve runs next for one request, counting it against its session while it runs; a
// request that creates a session (initialize) marks the new session used.
func (l *sessionLife) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		next.ServeHTTP(w, r)
		if id := w.Header().Get("Mcp-Session-Id"); id != "" {
			l.mu.Lock()
			l.last[id] = l.now()
			l.mu.Unlock()
		}
		return
	}
	l.mu.Lock()
	l.open[id]++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		if l.open[id]--; l.open[id] <= 0 {
			delete(l.open, id)
		}
		l.last[id] = l.now()
		l.mu.Unlock()
	}()
	next.ServeHTTP(w, r)
}

// sweep closes every session in sessions with nothing in flight since the timeout,
// and forgets ids that are no session (ended, or never one: an agent may send any
// id, so the maps hold only what sessions and requests in flight need).
func (l *sessionLife) sweep(sessions map[string]func()) {
	now := l.now()
	var idle []func()
	l.mu.Lock()
	for id, closeSession := range sessions {
		if l.open[id] > 0 {
			continue
		}
		last, seen := l.last[id]
		switch {
		case !seen:
			l.last[id] = now // made before it was counted: the clock starts now
		case now.Sub(last) >= l.timeout:
			idle = append(idle, closeSession)
			delete(l.last, id)
		}
	}
	for id := range l.last {
		if _, ok := sessions[id]; !ok && l.open[id] == 0 {
			delete(l.last, id)
		}
	}
	l.mu.Unlock()
	for _, c := range idle {
		c()
	}
}

// lifeLoop sweeps the gateway's sessions a few times per timeout until Close.
func (g *Gateway) lifeLoop() {
	every := min(max(g.life.timeout/4, 10*time.Millisecond), time.Minute)
	g.loop(every, nil, func(bool) {
		sessions := map[string]func(){}
		for ss := range g.srv.Sessions() {
			sessions[ss.ID()] = func() { _ = ss.Close() }
		}
		g.life.sweep(sessions)
	})
}

// requesterHeader carries, from the gateway's HTTP handler to its MCP handlers, which
// POST a JSON-RPC call came in: go-sdk hands a handler the request's header
// (RequestExtra.Header) but not its context, and for protocols before 2026-07-28 it
// does not end a call whose POST's connection closed. The handler sets it on every
// request, replacing whatever the agent sent.
const requesterHeader = "Airlock-Requester"

// requesters tracks who is still there to receive each agent call's answer: the POST
// it came in (its context ends when the client's connection closes, or the response
// ends) and its session (ended when it is deleted or closes). An agent that goes away
// without notifications/cancelled (killed, its terminal closed, its read timed out,
// its bridge's stdin closed) then withdraws its calls: a question waiting for it is
// withdrawn at once and nothing of it runs, where it would otherwise wait for the
// person and run for nobody.
type requesters struct {
	mu       sync.Mutex
	posts    map[string]context.Context // by requesterHeader value
	sessions map[string]*sessionEnd     // by Mcp-Session-Id, sessions with a call bound
}

type sessionEnd struct {
	calls map[uint64]context.CancelCauseFunc // the calls bound to it, ended with its cause
	next  uint64
}

func newRequesters() *requesters {
	return &requesters{posts: map[string]context.Context{}, sessions: map[string]*sessionEnd{}}
}

// post marks r with its requester id and remembers its context until done is
// called (when the handler returns).
func (q *requesters) post(r *http.Request) (done func()) {
	id := rand.Text()
	r.Header.Set(requesterHeader, id)
	q.mu.Lock()
	q.posts[id] = r.Context()
	q.mu.Unlock()
	return func() {
		q.mu.Lock()
		delete(q.posts, id)
		q.mu.Unlock()
	}
}

// endSession ends the calls of session id (deleted, or closed): they are withdrawn
// as their agent's.
func (q *requesters) endSession(id string) { q.endSessionWith(id, model.ErrAgentGone) }

// endSessionWith ends the calls of session id with cause, which is
// model.ErrAgentGone or one that is it (errors.Is): model.ErrTokenRevoked.
func (q *requesters) endSessionWith(id string, cause error) {
	q.mu.Lock()
	s := q.sessions[id]
	delete(q.sessions, id)
	var calls []context.CancelCauseFunc
	if s != nil {
		for _, c := range s.calls {
			calls = append(calls, c)
		}
	}
	q.mu.Unlock()
	// At once, not in a goroutine of its own: the cause is each call's before
	// anything else (the session's close ending its POSTs) can end it.
	for _, c := range calls {
		c(cause)
	}
}

// bind returns ctx ending, with the cause model.ErrAgentGone, also when the call's
// POST or its session ends. A call marked with a requester id the handler no longer
// holds came in a POST that already ended: its context ends at once (fail closed).
func (q *requesters) bind(ctx context.Context, sessionID string, h http.Header) (context.Context, func()) {
	bound, cancel := context.WithCancelCause(ctx)
	gone := func() { cancel(model.ErrAgentGone) }
	var stops []func() bool
	q.mu.Lock()
	if ids := h.Values(requesterHeader); len(ids) > 0 {
		if post, ok := q.posts[ids[0]]; ok && len(ids) == 1 {
			stops = append(stops, context.AfterFunc(post, gone))
		} else {
			gone()
		}
	}
	if sessionID != "" {
		s := q.sessions[sessionID]
		if s == nil {
			s = &sessionEnd{calls: map[uint64]context.CancelCauseFunc{}}
			q.sessions[sessionID] = s
		}
		n := s.next
		s.next++
		s.calls[n] = cancel
		stops = append(stops, func() bool {
			q.mu.Lock()
			delete(s.calls, n)
			q.mu.Unlock()
			return true
		})
	}
	q.mu.Unlock()
	return bound, func() {
		for _, stop := range stops {
			stop()
		}
		cancel(nil)
	}
}

// errNotAccepted answers a request of a session whose token is no longer accepted
// (revoked, or the tokens file cannot be read), or that no token is known to have
// opened.
var errNotAccepted = errors.New("airlock: this session's token is not accepted (revoked, or airlock cannot read its tokens file); nothing was done")

// boundToRequester is the receiving middleware that binds every agent call, read,
// get, completion and subscription to its requester (requesters.bind).
func (g *Gateway) boundToRequester(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/call", "resources/read", "prompts/get", "completion/complete", "resources/subscribe":
		default:
			return next(ctx, method, req)
		}
		var h http.Header
		if ex := req.GetExtra(); ex != nil {
			h = ex.Header
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		id := ""
		if ss != nil {
			id = ss.ID()
		}
		ctx, done := g.requesters.bind(ctx, id, h)
		defer done()
		if ss != nil {
			// Bound first, then watched: the watch ends the session's bound calls
			// when it closes, even if it closed already. Bound first, then its
			// token checked: a revocation after the check ends the bound call.
			ctxName, client, err := g.acceptedAgent(ctx, ss)
			if err != nil {
				return nil, err
			}
			ctx = withAccepted(ctx, ss, ctxName, client)
		}
		return next(ctx, method, req)
	}
}
