package gateway

import (
	"container/list"
	"context"
	"errors"
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

	// cancel ends the connection's context, and with it the context of the request
	// it serves (set by withConn).
	cancel context.CancelCauseFunc

	// Pipelined bytes (see awaitAnswer), guarded by rmu.
	rmu      sync.Mutex
	awaiting bool          // a request's handler runs with its body read
	watch    chan struct{} // closed when the watcher ends; nil when none runs
	stopping bool          // the watcher is being stopped: its read's timeout is ours
	buf      []byte        // read by the watcher, for net/http's next reads
	rerr     error         // how the watcher's reading ended, after buf
}

// maxPipelined bounds what a client may send behind a request that is still being
// answered; beyond it the connection is ended.
const maxPipelined = 64 << 10

// errClientLeft ends a connection's context when its client closed it while a
// request on it was still being answered.
var errClientLeft = errors.New("the client closed its connection")

// Read is the connection's read, served first from what the watcher read.
func (c *trackedConn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	if len(c.buf) > 0 {
		n := copy(p, c.buf)
		c.buf = c.buf[n:]
		c.rmu.Unlock()
		return n, nil
	}
	if err := c.rerr; err != nil {
		c.rmu.Unlock()
		return 0, err
	}
	c.rmu.Unlock()
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.rmu.Lock()
		if c.awaiting && c.watch == nil {
			// net/http's read that watches for the close returned data: the client
			// pipelined its next request, and net/http no longer watches.
			c.watch = make(chan struct{})
			go c.watchClose(c.watch)
		}
		c.rmu.Unlock()
	}
	return n, err
}

// watchClose reads what the client sends behind a request being answered, keeping
// it for net/http, until the client closes the connection (the request's context
// ends), it sends more than maxPipelined (likewise), or stopWatch stops it.
func (c *trackedConn) watchClose(done chan struct{}) {
	defer close(done)
	b := make([]byte, 4096)
	for {
		n, err := c.Conn.Read(b)
		c.rmu.Lock()
		c.buf = append(c.buf, b[:n]...)
		ours := c.stopping
		over := len(c.buf) > maxPipelined
		if over {
			err = fmt.Errorf("the client sent more than %d bytes behind a request still being answered", maxPipelined)
		}
		if err != nil {
			var ne net.Error
			if ours && errors.As(err, &ne) && ne.Timeout() {
				err = nil // stopped by stopWatch: the connection goes on
			}
			c.rerr = err
		}
		c.rmu.Unlock()
		switch {
		case err == nil && ours:
			return
		case err != nil:
			if c.cancel != nil {
				if over {
					c.cancel(err)
				} else {
					c.cancel(errClientLeft)
				}
			}
			return
		}
	}
}

// awaitAnswer marks the connection as serving a request whose body is read, until
// done. net/http learns that the client closed the connection by a read it keeps
// going meanwhile, but gives that up once the read returns a byte of a pipelined
// request: a client that pipelines and closes would leave its request, a call
// waiting for a person among them, running for nobody. So from that byte on the
// connection reads the socket itself (keeping what it reads for net/http) and ends
// the request's context when the client closes it.
func (c *trackedConn) awaitAnswer() (done func()) {
	c.rmu.Lock()
	c.awaiting = true
	c.rmu.Unlock()
	return func() {
		c.rmu.Lock()
		c.awaiting = false
		w := c.watch
		c.watch = nil
		c.stopping = w != nil
		c.rmu.Unlock()
		if w == nil {
			return
		}
		_ = c.Conn.SetReadDeadline(longAgo)
		<-w
		_ = c.Conn.SetReadDeadline(time.Time{})
		c.rmu.Lock()
		c.stopping = false
		c.rmu.Unlock()
	}
}

// longAgo is a deadline already passed: setting it ends a blocked read at once.
var longAgo = time.Unix(1, 0)

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
		if c.cancel != nil {
			c.cancel(errClientLeft)
		}
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

// withConn is the http.Server's ConnContext: handlers find their connection, and
// the connection can end its requests' contexts.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*trackedConn); ok {
		ctx, tc.cancel = context.WithCancelCause(ctx)
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

// awaitingAnswer is trackedConn.awaitAnswer for r's connection; without a tracked
// connection it does nothing.
func awaitingAnswer(r *http.Request) (done func()) {
	if tc, ok := r.Context().Value(connKey{}).(*trackedConn); ok {
		return tc.awaitAnswer()
	}
	return func() {}
}
