package gateway

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestConnBound_BelowTheDescriptorLimit(t *testing.T) {
	for _, c := range []struct{ want, fds, bound int }{
		{4096, 0, 4096},       // no limit to read: as configured
		{4096, 1 << 20, 4096}, // a large limit: as configured
		{4096, 20000, 4096},   // room for it
		{4096, 4096, 3072},    // a quarter kept for servers' pipes
		{4096, 1024, 768},     // at least 256 kept
		{4096, 256, 128},      // too small for the headroom: half
		{10, 1024, 10},        // a smaller wish stands
		{4096, 1, 1},          // never zero
	} {
		if got := connBound(c.want, c.fds); got != c.bound {
			t.Errorf("connBound(%d, %d) = %d, want %d", c.want, c.fds, got, c.bound)
		}
	}
}

// closed reports whether the far end of a net.Pipe saw its conn closed.
func closed(far net.Conn) bool {
	_ = far.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	_, err := far.Read(make([]byte, 1))
	return err != nil && !strings.Contains(err.Error(), "timeout")
}

func TestConnLimiter_MakesRoomButNeverCutsAnAuthenticatedRequest(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	l := newConnLimiter(10, 2, func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() })
	pipe := func() (*trackedConn, net.Conn) {
		near, far := net.Pipe()
		return l.admit(near), far
	}
	a, aFar := pipe()
	b, bFar := pipe()
	if a == nil || b == nil || l.open() != 2 {
		t.Fatalf("two connections under a bound of two: %v %v, %d open", a, b, l.open())
	}
	// A third: the oldest that never authenticated (a) makes room.
	c, _ := pipe()
	if c == nil || !closed(aFar) || l.open() != 2 {
		t.Fatalf("the third connection: admitted %v, oldest closed %v, %d open", c != nil, closed(aFar), l.open())
	}
	// Both in an authenticated request: a fourth is refused, neither is cut.
	bDone, cDone := b.serve(), c.serve()
	d, dFar := pipe()
	if d != nil || !closed(dFar) || closed(bFar) {
		t.Fatalf("with every connection in an authenticated request: fourth admitted %v, b cut %v", d != nil, closed(bFar))
	}
	// b's request ends; b is idle now and makes room for the next.
	bDone()
	e, _ := pipe()
	if e == nil || !closed(bFar) {
		t.Fatalf("an idle authenticated connection did not make room: admitted %v", e != nil)
	}
	cDone()
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 1 || !strings.Contains(lines[0], "the limit per client is 2") {
		t.Errorf("log lines %q, want one (at most one per %v) naming the limit", lines, logEvery)
	}
	_ = e.Close()
	_ = c.Close()
	if l.open() != 0 {
		t.Errorf("%d connections counted after all closed", l.open())
	}
}
