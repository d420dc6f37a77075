package conn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk writes a stdio message to the server's stdin in one blocking write and never
// looks at the writer's context: a server that stops reading its stdin fills the pipe
// (64 KiB on Linux), and the write of the next large message blocks for good. The call
// waiting on it never reaches its timeout, and go-sdk's close waits for it too. So
// every write to a stdio server goes through a stdioConn, which bounds it.

// stdinPipe is a stdio server's stdin as go-sdk's connection writes it, with the
// deadline machinery of stdioConn. Close does nothing: the process owns its stdin and
// closes it when it stops (process.stop).
type stdinPipe struct {
	w  io.Writer
	dl writeDeadliner // nil: the pipe has no write deadlines (Windows)

	mu  sync.Mutex
	gen uint64 // numbers writes: an interruption applies only to the write it was for

	// n and want are how much of the last Write reached the pipe and how much was
	// asked for (written only under stdioConn's write slot).
	n, want int
}

type writeDeadliner interface{ SetWriteDeadline(time.Time) error }

func newStdinPipe(w io.Writer) *stdinPipe {
	p := &stdinPipe{w: w}
	if d, ok := w.(writeDeadliner); ok && d.SetWriteDeadline(time.Time{}) == nil {
		p.dl = d
	}
	return p
}

func (p *stdinPipe) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n, p.want = n, len(b)
	return n, err
}

func (p *stdinPipe) Close() error { return nil }

// longAgo is a deadline already passed: setting it ends a blocked write at once.
var longAgo = time.Unix(1, 0)

// arm sets the deadline of the write about to start and makes ctx ending interrupt it.
// The returned func is called once the write is over.
func (p *stdinPipe) arm(ctx context.Context, deadline time.Time) (disarm func()) {
	p.mu.Lock()
	p.gen++
	gen := p.gen
	p.n, p.want = 0, 0
	_ = p.dl.SetWriteDeadline(deadline)
	p.mu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.gen == gen {
			_ = p.dl.SetWriteDeadline(longAgo)
		}
	})
	return func() {
		stop()
		p.mu.Lock()
		p.gen++ // an interruption still on its way is for a write that is over
		p.mu.Unlock()
	}
}

// stdioConn is go-sdk's stdio connection with bounded writes. One message is written
// at a time, and waiting for the turn ends with the writer's context. Each write has a
// deadline: the writer's context's, and at most timeout (the server's call timeout)
// from when it starts; the context ending interrupts it too. A write cut off before any
// byte reached the pipe leaves the stream whole and only fails. A server that took part
// of a message and no more, or none within timeout, has stopped reading: the
// connection is broken for good (a message cut short cannot be taken back), stalled
// is told why, and every later write fails at once. Where the pipe has no write
// deadlines (Windows) neither the context nor its deadline ends a blocked write: one
// still blocked at timeout breaks the connection, and stopping the process ends it.
type stdioConn struct {
	mcp.Connection // go-sdk's stdio connection over the pipes
	pipe           *stdinPipe
	timeout        time.Duration
	stalled        func(error) // called once, when the connection breaks
	slot           chan struct{}

	mu     sync.Mutex
	broken error
}

func newStdioConn(conn mcp.Connection, pipe *stdinPipe, timeout time.Duration, stalled func(error)) *stdioConn {
	return &stdioConn{Connection: conn, pipe: pipe, timeout: timeout, stalled: stalled, slot: make(chan struct{}, 1)}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case c.slot <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.slot }()
	if err := c.brokenErr(); err != nil {
		return err
	}
	began := time.Now()
	if c.pipe.dl == nil {
		// Without write deadlines only the process's end ends a blocked write: a
		// write still blocked at the timeout breaks the connection, and stalled
		// stops the process.
		t := time.AfterFunc(c.timeout, func() {
			c.breakWith(fmt.Errorf("the server stopped reading its input: a message to it was not taken within %s", c.timeout))
		})
		err := c.Connection.Write(ctx, msg)
		t.Stop()
		if berr := c.brokenErr(); berr != nil && err != nil {
			return berr
		}
		return err
	}
	deadline := began.Add(c.timeout)
	ctxDeadline, byCtx := ctx.Deadline()
	if byCtx = byCtx && ctxDeadline.Before(deadline); byCtx {
		deadline = ctxDeadline
	}
	disarm := c.pipe.arm(ctx, deadline)
	err := c.Connection.Write(ctx, msg)
	disarm()
	if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	if byCtx && !time.Now().Before(ctxDeadline) {
		// The pipe's deadline and the context's timer are separate clocks: wait the
		// instant it takes the context to end too, so that go-sdk, which tells a
		// cancelled call from a broken connection by ctx.Err, sees a timeout.
		<-ctx.Done()
	}
	n, want := c.pipe.n, c.pipe.want
	if n == 0 && ctx.Err() != nil {
		return ctx.Err() // nothing of the message left: the stream is whole
	}
	took := time.Since(began).Round(time.Millisecond)
	var berr error
	if n == 0 {
		berr = fmt.Errorf("the server stopped reading its input: it took none of a %d-byte message within %s", want, took)
	} else {
		berr = fmt.Errorf("the server stopped reading its input: it took %d of the %d bytes of a message within %s", n, want, took)
	}
	c.breakWith(berr)
	return berr
}

func (c *stdioConn) brokenErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.broken
}

// breakWith breaks the connection with err, once: later writes fail with it, and
// stalled is told.
func (c *stdioConn) breakWith(err error) {
	c.mu.Lock()
	first := c.broken == nil
	if first {
		c.broken = err
	}
	c.mu.Unlock()
	if first {
		c.stalled(err)
	}
}
