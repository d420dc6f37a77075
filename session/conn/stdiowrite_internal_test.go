//go:build unix

package conn

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioPair is a stdioConn writing into a real pipe that nobody reads until the test
// says so.
type stdioPair struct {
	conn    *stdioConn
	r, w    *os.File
	stalled atomic.Int32
	why     atomic.Value
}

func newStdioPair(t *testing.T, timeout time.Duration) *stdioPair {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// The connection's reader is a pipe of its own that stays quiet.
	qr, qw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pipe := newStdinPipe(w)
	if pipe.dl == nil {
		t.Skip("this platform's pipes have no write deadlines")
	}
	inner, err := (&mcp.IOTransport{Reader: qr, Writer: pipe}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := &stdioPair{r: r, w: w}
	p.conn = newStdioConn(inner, pipe, timeout, func(err error) {
		p.stalled.Add(1)
		p.why.Store(err)
	})
	t.Cleanup(func() { inner.Close(); qw.Close(); r.Close(); w.Close() })
	return p
}

// fill writes into the pipe, behind the connection's back, until it is full.
func (p *stdioPair) fill(t *testing.T) {
	t.Helper()
	_ = p.w.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := p.w.Write(make([]byte, 4<<20)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("filling the pipe: %v", err)
	}
	_ = p.w.SetWriteDeadline(time.Time{})
}

// drain reads the pipe from now on; the returned func returns the lines read after
// the filler bytes, once the pipe is closed.
func (p *stdioPair) drain() func() []string {
	done := make(chan []string, 1)
	go func() {
		var lines []string
		sc := bufio.NewScanner(p.r)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines = append(lines, strings.TrimLeft(sc.Text(), "\x00"))
		}
		done <- lines
	}()
	return func() []string { p.w.Close(); return <-done }
}

func note(method string, size int) *jsonrpc.Request {
	params, _ := json.Marshal(map[string]string{"data": strings.Repeat("A", size)})
	return &jsonrpc.Request{Method: method, Params: params}
}

// A write to a full pipe that the writer's context ends before any byte went in only
// fails: the stream is whole, the connection is not broken, and the next write goes
// through once the server reads again.
func TestStdioConn_CancelledBeforeAnyByteKeepsTheStream(t *testing.T) {
	p := newStdioPair(t, time.Minute)
	p.fill(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	began := time.Now()
	err := p.conn.Write(ctx, note("notifications/first", 10))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("the cancelled write returned after %v", d)
	}
	if p.stalled.Load() != 0 || p.conn.brokenErr() != nil {
		t.Fatalf("a write cut off before any byte broke the connection: %v", p.conn.brokenErr())
	}
	lines := p.drain()
	if err := p.conn.Write(context.Background(), note("notifications/second", 10)); err != nil {
		t.Fatalf("the next write: %v", err)
	}
	got := lines()
	if len(got) != 1 || !strings.Contains(got[0], "notifications/second") {
		t.Errorf("the server read %q, want only the second message, whole", got)
	}
}

// A message the server took part of and no more before the deadline breaks the
// connection for good: stalled is told once, and every later write fails at once.
func TestStdioConn_PartWrittenBreaksTheConnection(t *testing.T) {
	p := newStdioPair(t, time.Minute)
	// Long enough that the first 64 KiB reach the pipe before the deadline even on a
	// loaded machine (with 300 ms, a run at load 20 once wrote no byte in time and
	// saw the whole-stream error instead).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := p.conn.Write(ctx, note("notifications/big", 200<<10))
	if err == nil || !strings.Contains(err.Error(), "stopped reading its input") {
		t.Fatalf("err = %v, want the server stopped reading", err)
	}
	if ctx.Err() == nil {
		t.Error("the write returned before its context ended")
	}
	if p.stalled.Load() != 1 {
		t.Fatalf("stalled called %d times, want 1", p.stalled.Load())
	}
	t.Logf("broken: %v", p.why.Load())
	lines := p.drain()
	began := time.Now()
	if err := p.conn.Write(context.Background(), note("notifications/after", 10)); err == nil || !strings.Contains(err.Error(), "stopped reading") {
		t.Errorf("a write after the break: err = %v, want the break", err)
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("a write after the break took %v, not at once", d)
	}
	if p.stalled.Load() != 1 {
		t.Errorf("stalled called %d times, want 1", p.stalled.Load())
	}
	for _, l := range lines() {
		if strings.Contains(l, "notifications/after") {
			t.Error("a message was written after the stream was cut")
		}
	}
}

// A server that takes none of a message within the connection's timeout (the call
// timeout) has stopped reading, even when the writer's context has no deadline.
func TestStdioConn_NoneTakenWithinTimeoutBreaks(t *testing.T) {
	p := newStdioPair(t, 300*time.Millisecond)
	p.fill(t)
	began := time.Now()
	err := p.conn.Write(context.Background(), note("notifications/x", 10))
	if err == nil || !strings.Contains(err.Error(), "took none of") {
		t.Fatalf("err = %v, want the server took none of the message", err)
	}
	if d := time.Since(began); d < 250*time.Millisecond || d > 5*time.Second {
		t.Errorf("the write returned after %v, want about the timeout (300ms)", d)
	}
	if p.stalled.Load() != 1 {
		t.Errorf("stalled called %d times, want 1", p.stalled.Load())
	}
}

// Writes wait their turn under their own context: one blocked on a full pipe does not
// hold another writer past that writer's deadline.
func TestStdioConn_WaitingForTheTurnEndsWithTheContext(t *testing.T) {
	p := newStdioPair(t, time.Minute)
	p.fill(t)
	first, cancelFirst := context.WithCancel(context.Background())
	defer cancelFirst()
	go func() { _ = p.conn.Write(first, note("notifications/first", 10)) }()
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	if err := p.conn.Write(ctx, note("notifications/second", 10)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want its own deadline", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("the waiting write returned after %v", d)
	}
}
