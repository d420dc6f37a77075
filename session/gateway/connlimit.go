package gateway

import (
	"container/list"
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// DefaultMaxConns and DefaultMaxConnsPerClient are the connection bounds when
// Options leaves them zero. Agents on this machine all come from one loopback
// address, so the per-client bound is what they share; 50 agents use a few hundred.
const (
	DefaultMaxConns          = 4096
	DefaultMaxConnsPerClient = 1024
)

// fdHeadroom is how many descriptors below the process's limit the gateway leaves
// for everything else airlock opens: servers' pipes (three per stdio server and its
// restarts), upstream connections, the audit log and state files.
func fdHeadroom(limit int) int { return max(limit/4, 256) }

// connBound is the total connection bound: the wanted one, held below the
// descriptor limit with headroom (half the limit when the limit is too small for
// the headroom).
func connBound(want, fdLimit int) int {
	if fdLimit <= 0 {
		return want
	}
	room := fdLimit - fdHeadroom(fdLimit)
	if room < 32 {
		room = fdLimit / 2
	}
	return max(min(want, room), 1)
}

// connLimiter holds the gateway's connections within a total bound and a bound
// per remote address. A connection over a bound makes room by closing the oldest
// connection of that client (or of all, for the total) that is not serving an
// authenticated request, preferring those that never authenticated: a client that
// opens connections and never completes an authenticated request (headers
// trickled, no token) cannot keep a real agent out, and an agent's call that waits
// for a person is never cut. When every connection is in an authenticated request,
// the new one is refused (closed at once). Either is logged, at most one line per
// logEvery.
type connLimiter struct {
	total, perClient int
	log              func(string)
	now              func() time.Time

	mu       sync.Mutex
	order    *list.List // of *trackedConn, oldest first
	byClient map[string]int
	noted    time.Time
	closed   int // since the last log line: connections closed to make room
	refused  int // since the last log line: connections refused
	lastWhy  string
}

const logEvery = 10 * time.Second

func newConnLimiter(total, perClient int, logf func(string)) *connLimiter {
	if logf == nil {
		logf = func(s string) { log.Print("airlock gateway: " + s) }
	}
	return &connLimiter{total: total, perClient: perClient, log: logf, now: time.Now,
		order: list.New(), byClient: map[string]int{}}
}

// trackedConn is one accepted connection under the limiter.
type trackedConn struct {
	net.Conn
	l      *connLimiter
	client string
	elem   *list.Element
	// Guarded by l.mu: requests in an authenticated handler now, and whether any
	// request on it ever authenticated.
	serving int
	authed  bool
	once    sync.Once
}

// Close removes the connection from the limiter and closes it.
func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		if c.elem != nil {
			c.l.order.Remove(c.elem)
			c.elem = nil
			if c.l.byClient[c.client]--; c.l.byClient[c.client] <= 0 {
				delete(c.l.byClient, c.client)
			}
		}
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// CloseWrite lets net/http half-close the connection as it does a TCP one.
func (c *trackedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// serve marks the connection as in an authenticated request until done.
func (c *trackedConn) serve() (done func()) {
	c.l.mu.Lock()
	c.serving++
	c.authed = true
	c.l.mu.Unlock()
	return func() {
		c.l.mu.Lock()
		c.serving--
		c.l.mu.Unlock()
	}
}

func clientOf(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}

// admit takes a new connection under the limits: it returns the tracked
// connection, having closed another to make room if it had to, or nil when it
// closed c itself.
func (l *connLimiter) admit(c net.Conn) *trackedConn {
	client := clientOf(c)
	l.mu.Lock()
	var victim *trackedConn
	why := ""
	switch {
	case l.byClient[client] >= l.perClient:
		why = fmt.Sprintf("%d connections from %s (the limit per client is %d)", l.byClient[client], client, l.perClient)
		victim = l.evictableLocked(client)
	case l.order.Len() >= l.total:
		why = fmt.Sprintf("%d connections open (the limit is %d, below the descriptor limit)", l.order.Len(), l.total)
		victim = l.evictableLocked("")
	}
	if why != "" && victim == nil {
		l.refused++
		l.noteLocked(why)
		l.mu.Unlock()
		_ = c.Close()
		return nil
	}
	if victim != nil {
		// Out of the count now, so that the new connection fits; closed below.
		l.order.Remove(victim.elem)
		victim.elem = nil
		if l.byClient[victim.client]--; l.byClient[victim.client] <= 0 {
			delete(l.byClient, victim.client)
		}
		l.closed++
		l.noteLocked(why)
	}
	tc := &trackedConn{Conn: c, l: l, client: client}
	tc.elem = l.order.PushBack(tc)
	l.byClient[client]++
	l.mu.Unlock()
	if victim != nil {
		_ = victim.Close()
	}
	return tc
}

// evictableLocked is the oldest connection (of client, or of anyone when client
// is "") not in an authenticated request: first among those that never
// authenticated, then among idle ones that did.
func (l *connLimiter) evictableLocked(client string) *trackedConn {
	var idle *trackedConn
	for e := l.order.Front(); e != nil; e = e.Next() {
		c := e.Value.(*trackedConn)
		if (client != "" && c.client != client) || c.serving > 0 {
			continue
		}
		if !c.authed {
			return c
		}
		if idle == nil {
			idle = c
		}
	}
	return idle
}

// noteLocked logs what the limits did, at most one line per logEvery.
func (l *connLimiter) noteLocked(why string) {
	l.lastWhy = why
	now := l.now()
	if now.Sub(l.noted) < logEvery {
		return
	}
	l.noted = now
	msg := fmt.Sprintf("%s: closed %d connection(s) that were not in an authenticated request, refused %d new one(s)", why, l.closed, l.refused)
	l.closed, l.refused = 0, 0
	go l.log(msg) // never under the lock, nor on the accept path
}

// open is how many connections the limiter holds.
func (l *connLimiter) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}

// limitedListener admits every accepted connection through a connLimiter.
type limitedListener struct {
	net.Listener
	l *connLimiter
}

func (ln limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if tc := ln.l.admit(c); tc != nil {
			return tc, nil
		}
	}
}

type connKey struct{}

// withConn is the http.Server's ConnContext: handlers find their connection.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*trackedConn); ok {
		return context.WithValue(ctx, connKey{}, tc)
	}
	return ctx
}

// servingAuthenticated marks r's connection as in an authenticated request (never
// closed to make room) until done; without a tracked connection it does nothing.
func servingAuthenticated(r *http.Request) (done func()) {
	if tc, ok := r.Context().Value(connKey{}).(*trackedConn); ok {
		return tc.serve()
	}
	return func() {}
}
