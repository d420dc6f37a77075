package conn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/oauth"
	"github.com/airlock-mcp/airlock/trust"
)

// Dial is what opening one connection needs besides the server's config: the
// callbacks into whoever owns the server (the Manager).
type Dial struct {
	// InProcess, when set, is the server to connect to in this process, in place of
	// the configured transport.
	InProcess *mcp.Server
	// Stderr receives a stdio server's stderr.
	Stderr io.Writer
	// Fence is told what a stdio start's sandbox enforces, before its error if any.
	Fence func(trust.Fence)
	// OAuth returns the server's OAuth handler (nil without an oauth table); called
	// only for the HTTP transports.
	OAuth func() (*oauth.Handler, error)
	// WriteTimeout bounds one write to a stdio server's stdin.
	WriteTimeout time.Duration
	// History, when set, keeps every message of the connection, both ways.
	History *History
}

// Link is one opened connection before its MCP handshake: the transport a client
// connects over, the stdio server's process (nil otherwise) and the capture that
// keeps the raw tools/list results.
type Link struct {
	Proc    *Process
	Capture *Capture

	cfg   config.Server
	hist  *History
	inner mcp.Transport
	bt    *boundedTransport // the HTTP transports' round tripper, nil otherwise
}

// Open opens cfg's transport (d.InProcess in its place when set): it starts a stdio
// server's process, or builds the HTTP client of a remote one.
func Open(ctx context.Context, cfg config.Server, d Dial) (*Link, error) {
	l := &Link{cfg: cfg, Capture: newCapture(), hist: d.History}
	if d.InProcess != nil {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := d.InProcess.Connect(ctx, st, nil); err != nil {
			return nil, fmt.Errorf("connecting in-process server: %w", err)
		}
		l.inner = ct
		return l, nil
	}
	switch cfg.Transport {
	case config.TransportStdio:
		p, f, err := startProcess(cfg, d.Stderr)
		d.Fence(f)
		if err != nil {
			return nil, err
		}
		l.Proc = p
		l.inner = processTransport{p, l.Capture, d.WriteTimeout}
	case config.TransportHTTP, config.TransportSSE:
		authz, err := d.OAuth()
		if err != nil {
			return nil, err
		}
		l.inner, l.bt = httpTransport(cfg, authz)
		if cfg.Transport == config.TransportHTTP {
			l.bt.capt, l.bt.hist = l.Capture, d.History
		}
	default:
		return nil, fmt.Errorf("unknown transport %q", cfg.Transport)
	}
	return l, nil
}

// Transport is what the client connects over: the link's transport with the
// capture around it; life is the connection's lifetime and end ends it.
func (l *Link) Transport(life context.Context, end context.CancelFunc) mcp.Transport {
	atHTTP := l.bt != nil && l.cfg.Transport == config.TransportHTTP
	return &captureTransport{inner: l.inner, sink: l.Capture, hist: l.hist, life: life, cancel: end, atHTTP: atHTTP, trim: l.bt == nil}
}

// Refused says what a failed handshake over the link may mean: a server that asked
// for a bearer token the config does not give.
func (l *Link) Refused(err error) error {
	if l.bt != nil && l.bt.wantsBearer.Load() && l.cfg.OAuth == nil {
		if slices.ContainsFunc(slices.Collect(maps.Keys(l.cfg.Headers)), func(k string) bool { return strings.EqualFold(k, "Authorization") }) {
			return fmt.Errorf("%w (the server refused the configured Authorization header)", err)
		}
		return fmt.Errorf("%w (the server asks for a bearer token: add a [servers.%s.oauth] table to authorize with OAuth, or an Authorization header)", err, l.cfg.Name)
	}
	return err
}

// Ended is why a connection that ended by itself ended: err is what go-sdk's Wait
// returned, proc the stdio server's process (nil otherwise), stopped here.
func Ended(err error, proc *Process) error {
	if proc != nil {
		proc.Stop()
		if serr := proc.StallErr(); serr != nil {
			// The server stopped reading its stdin: the connection was broken on
			// purpose, and the exit (our own stop) and the read error follow from it.
			err = serr
		} else if perr := proc.ExitError(); perr != nil {
			// When the connection merely ended, the process's exit says why. When the
			// connection failed by itself (a message over MaxMessageBytes, nesting too
			// deep) that failure is the cause and the exit, our own stop, comes second.
			if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
				err = perr
			} else {
				err = fmt.Errorf("%w (%v)", err, perr)
			}
		}
	}
	if err == nil {
		err = errors.New("connection closed by the server")
	}
	return err
}

// closeGrace bounds how long closing a connection waits for go-sdk's close.
const closeGrace = 500 * time.Millisecond

// Close closes a connection (cs and endLife may be nil) and stops its process,
// if any, within about closeGrace plus what stopping a process takes, whatever
// go-sdk's close does. go-sdk's close waits for every call in flight to end, and a
// call to a stalled server may end only with its call timeout, or (a write blocked
// on a pipe) only when the process is gone: so the process is stopped meanwhile, and
// the close is left to finish in the background once it has had closeGrace.
func Close(cs *mcp.ClientSession, proc *Process, endLife context.CancelFunc) {
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		if cs != nil {
			_ = cs.Close()
		}
	}()
	if proc != nil {
		proc.Stop()
	}
	t := time.NewTimer(closeGrace)
	select {
	case <-closed:
	case <-t.C:
	}
	t.Stop()
	if endLife != nil {
		endLife()
	}
}
