package gateway

import (
	"net/http"
	"sync"
	"time"
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
	defer g.wg.Done()
	every := min(max(g.life.timeout/4, 10*time.Millisecond), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-g.done:
			return
		case <-t.C:
			sessions := map[string]func(){}
			for ss := range g.srv.Sessions() {
				sessions[ss.ID()] = func() { _ = ss.Close() }
			}
			g.life.sweep(sessions)
		}
	}
}
