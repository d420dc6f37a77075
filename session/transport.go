package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session/config"
)

// Limits on what one server may make airlock hold in memory.
const (
	// MaxMessageBytes bounds one JSON-RPC message: a stdio line, an HTTP JSON body or
	// one server-sent event. A larger one drops the connection.
	MaxMessageBytes = 16 << 20
	// stderrKeepBytes bounds the stderr kept per server.
	stderrKeepBytes = 64 << 10
	// stopGrace is how long a stdio server may take to exit after its stdin closes
	// before its whole process group is signalled.
	stopGrace = 2 * time.Second
)

// process is a stdio server child started in its own process group, so that closing
// it ends every process it started too.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	tree   procTree      // its process group (Unix) or Job Object (Windows)
	done   chan struct{} // closed when the child has been reaped
	err    error         // the child's exit error, valid after done

	closeOnce sync.Once
}

// executable resolves DESIGN's rule that command "airlock" means this executable.
func executable(command string) string {
	if command == "airlock" {
		if self, err := os.Executable(); err == nil {
			return self
		}
	}
	return command
}

// startProcess starts s.Command with stdout and stdin piped and stderr drained into
// stderr continuously (a child that floods stderr never blocks on a full pipe).
func startProcess(s config.Server, stderr io.Writer) (*process, error) {
	cmd := exec.Command(executable(s.Command), s.Args...)
	cmd.Dir = s.Cwd
	cmd.Env = os.Environ()
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = procAttr()
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %q: %w", s.Command, err)
	}
	tree, err := attachTree(cmd)
	if err != nil {
		_ = cmd.Wait()
		return nil, fmt.Errorf("starting %q: %w", s.Command, err)
	}
	p := &process{cmd: cmd, stdin: stdin, stdout: stdout, tree: tree, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop closes stdin, gives the child stopGrace to exit, then signals the whole process
// group: SIGTERM, and SIGKILL after another grace period. It returns once the child is
// reaped. stop is idempotent.
func (p *process) stop() {
	p.closeOnce.Do(func() {
		_ = p.stdin.Close()
		select {
		case <-p.done:
		case <-time.After(stopGrace):
			_ = p.tree.kill(p.cmd, syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(stopGrace):
				_ = p.tree.kill(p.cmd, syscall.SIGKILL)
				<-p.done
			}
		}
		// The leader is gone; make sure nothing it started lingers in the group.
		_ = p.tree.kill(p.cmd, syscall.SIGKILL)
		p.tree.release()
	})
}

// exitError describes how the child ended, for status lines.
func (p *process) exitError() error {
	select {
	case <-p.done:
		if p.err == nil {
			return errors.New("server process exited")
		}
		return fmt.Errorf("server process exited: %w", p.err)
	default:
		return nil
	}
}

// processTransport connects go-sdk to a started process over its pipes with our
// line-length bound. Closing the connection does not stop the process: the session
// owns it and stops it explicitly.
type processTransport struct{ p *process }

func (t processTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	return (&mcp.IOTransport{
		Reader:        t.p.stdout,
		Writer:        nopWriteCloser{t.p.stdin},
		MaxLineLength: MaxMessageBytes,
	}).Connect(ctx)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// httpTransport builds the client transport for an http or sse server, with oauth
// (nil without an [servers.NAME.oauth] table) authorizing streamable HTTP requests.
// It never sets http.Client.Timeout, which would cut long-lived event streams;
// contexts bound calls.
func httpTransport(s config.Server, oauth *oauthHandler) (mcp.Transport, *boundedTransport) {
	bt := &boundedTransport{base: http.DefaultTransport, headers: s.Headers}
	client := &http.Client{Transport: bt}
	if s.Transport == config.TransportSSE {
		return &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: client, MaxEventSize: MaxMessageBytes}, bt
	}
	t := &mcp.StreamableClientTransport{
		Endpoint:     s.URL,
		HTTPClient:   client,
		MaxEventSize: MaxMessageBytes,
		MaxRetries:   2,
	}
	if oauth != nil {
		t.OAuthHandler = oauth
	}
	return t, bt
}

// boundedTransport adds the configured headers to every request and bounds JSON
// response bodies to MaxMessageBytes (event streams are bounded per event by go-sdk).
// It notes a 401 asking for a bearer token, so that a server without an oauth table
// fails with a hint.
type boundedTransport struct {
	base    http.RoundTripper
	headers map[string]string
	// capt, when set, receives the raw tools/list results (streamable HTTP).
	capt *capture

	wantsBearer atomic.Bool
}

// ErrBodyTooLarge is returned when a server's HTTP response body exceeds MaxMessageBytes.
var ErrBodyTooLarge = errors.New("response body exceeds the size limit")

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	listing := httpCapture(t.capt, req)
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized && strings.HasPrefix(strings.ToLower(resp.Header.Get("WWW-Authenticate")), "bearer") {
		t.wantsBearer.Store(true)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if resp.ContentLength > MaxMessageBytes {
			resp.Body.Close()
			return nil, fmt.Errorf("%w (%d bytes)", ErrBodyTooLarge, resp.ContentLength)
		}
		resp.Body = &limitedBody{rc: resp.Body, left: MaxMessageBytes}
	}
	if listing {
		tapBody(t.capt, resp)
	}
	return resp, nil
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body that ends exactly at the limit from a longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, ErrBodyTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
