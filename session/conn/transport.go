package conn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/fence"
	"github.com/airlock-mcp/airlock/session/oauth"
	"github.com/airlock-mcp/airlock/trust"
)

// Limits on what one server may make airlock hold in memory.
const (
	// MaxMessageBytes bounds one JSON-RPC message: a stdio line, an HTTP JSON body or
	// one server-sent event. A larger one drops the connection.
	MaxMessageBytes = 16 << 20
	// StderrKeepBytes bounds the stderr kept per server.
	StderrKeepBytes = 64 << 10
	// stopGrace is how long a stdio server may take to exit after its stdin closes
	// before its whole process group is sent SIGTERM, and again after SIGTERM before
	// SIGKILL. Closing a server takes about twice this plus waitDelay, and reapWait more
	// only if a process sent SIGKILL is not reaped at once, so that quitting or
	// reconnecting stays within a few seconds whatever the server does.
	stopGrace = time.Second
	// waitDelay bounds how long reaping a server that has exited waits for its stderr
	// to close: a process it started may keep the pipe open (os/exec's WaitDelay).
	waitDelay = 500 * time.Millisecond
	// reapWait bounds the wait for a process group sent SIGKILL to be reaped.
	reapWait = 2 * time.Second
)

// Process is a stdio server child started in its own Process group, so that closing
// it ends every Process it started too.
type Process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	tree   procTree      // its process group (Unix) or Job Object (Windows)
	done   chan struct{} // closed when the child has been reaped
	err    error         // the child's exit error, valid after done

	closeOnce sync.Once

	stallMu sync.Mutex
	stall   error // why the connection broke on a write (stdioConn), if it did
}

// executable resolves the rule that command "airlock" means this executable.
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
// With a sandbox table the command starts fenced (session/fence): the launcher's
// report is read before this returns, and a fence that is required and not applied
// in full, or whose report is missing or damaged, means no server. The Fence
// returned says what was applied, or why not, whether or not a process started.
func startProcess(s config.Server, stderr io.Writer) (*Process, trust.Fence, error) {
	p, f, err := startOnce(s, stderr, "")
	if err != nil && s.Sandbox != nil && !s.Sandbox.Required && errors.Is(err, fence.ErrNamespaces) {
		// Not required: start it again without the namespace; the launcher then
		// reports the fence unapplied and the server runs marked unfenced.
		p, f, err = startOnce(s, stderr, err.Error())
	}
	return p, f, err
}

// RequestedFence is the Fence of a server before any start: what its config asks.
func RequestedFence(s config.Server) trust.Fence {
	if s.Sandbox == nil {
		return trust.Fence{}
	}
	return trust.Fence{Requested: true, Network: s.Sandbox.Network, Read: s.Sandbox.ReadAsWritten, Write: s.Sandbox.WriteAsWritten,
		Detail: "not started yet"}
}

func startOnce(s config.Server, stderr io.Writer, noNamespace string) (*Process, trust.Fence, error) {
	f := RequestedFence(s)
	build := func() *exec.Cmd {
		cmd := exec.Command(executable(s.Command), s.Args...)
		cmd.Dir = s.Cwd
		cmd.Env = serverEnv(s, os.Environ(), runtime.GOOS)
		cmd.SysProcAttr = procAttr()
		cmd.Stderr = stderr
		cmd.WaitDelay = waitDelay
		return cmd
	}
	cmd := build()
	var launch *fence.Launch
	if sb := s.Sandbox; sb != nil {
		l, err := fence.Wrap(cmd, fence.Sandbox{Read: sb.Read, Write: sb.Write, Network: sb.Network, Required: sb.Required,
			MemoryBytes: sb.MemoryBytes, CPUSeconds: sb.CPUSeconds, Processes: sb.Processes}, noNamespace)
		if err != nil {
			f.Detail = "unfenced: " + err.Error()
			if sb.Required {
				return nil, f, err
			}
			cmd = build() // Wrap may have changed it; not required: start it plain
		} else {
			launch = l
		}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, f, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, f, err
	}
	if err := cmd.Start(); err != nil {
		if launch != nil {
			err = launch.StartFailed(cmd, err)
			f.Detail = "unfenced: " + err.Error()
		}
		return nil, f, fmt.Errorf("starting %q: %w", s.Command, err)
	}
	if launch != nil {
		launch.Started()
	}
	tree, err := attachTree(cmd)
	if err != nil {
		_ = cmd.Wait()
		if launch != nil {
			launch.Cleanup()
		}
		return nil, f, fmt.Errorf("starting %q: %w", s.Command, err)
	}
	p := &Process{cmd: cmd, stdin: stdin, stdout: stdout, tree: tree, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		if errors.Is(err, exec.ErrWaitDelay) {
			// The server exited and something it started held stderr open: how the
			// server itself ended is what counts.
			err = nil
			if !cmd.ProcessState.Success() {
				err = &exec.ExitError{ProcessState: cmd.ProcessState}
			}
		}
		p.err = err
		if launch != nil {
			// Not Cleanup: a launcher that refused exits at once, and the report
			// it wrote is still to be read below.
			launch.Exited()
		}
		close(p.done)
	}()
	if launch == nil {
		return p, f, nil
	}
	timeout := s.ConnectTimeout
	if timeout <= 0 {
		timeout = config.DefaultConnectTimeout
	}
	rep, err := launch.Wait(time.Now().Add(timeout))
	switch {
	case err != nil:
		err = fmt.Errorf("sandbox requested but not confirmed: %w", err)
	case rep.ExecError != "":
		err = fmt.Errorf("fenced server not started: %s", rep.ExecError)
	case !rep.Applied && s.Sandbox.Required:
		err = errors.New(rep.Reason)
	}
	if err != nil {
		p.Stop()
		f.Detail = "unfenced: " + err.Error()
		return nil, f, err
	}
	f.Applied, f.Detail = rep.Applied, rep.Detail()
	if len(launch.Own) > 0 {
		f.Detail += "; the command's own files: " + strings.Join(launch.Own, ", ")
	}
	return p, f, nil
}

// Stop closes stdin, gives the child stopGrace to exit, then signals the whole process
// group: SIGTERM, and SIGKILL after another stopGrace. It returns once the child is
// reaped, or reapWait after SIGKILL if it still is not: Stop never waits on the
// server's pipes or on go-sdk. Stop is idempotent; a second call waits for the first.
func (p *Process) Stop() {
	p.closeOnce.Do(func() {
		// Closing stdin asks the server to exit, and ends a write to it that is
		// blocked on a full pipe. Where a pipe cannot be closed under a blocked write
		// (Windows), the close waits for that write; it is not waited for here, and
		// terminating the process ends the write.
		go func() { _ = p.stdin.Close() }()
		if !p.exited(stopGrace) {
			_ = p.tree.kill(p.cmd, syscall.SIGTERM)
			if !p.exited(stopGrace) {
				_ = p.tree.kill(p.cmd, syscall.SIGKILL)
				p.exited(reapWait)
			}
		}
		// The leader is gone (or was sent SIGKILL and not reaped within reapWait);
		// make sure nothing it started lingers in the group.
		_ = p.tree.kill(p.cmd, syscall.SIGKILL)
		p.tree.release()
	})
}

// exited waits up to d for the child to be reaped and reports whether it was.
func (p *Process) exited(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// stalled notes why the connection to the server broke on a write (the server
// stopped reading its stdin) and stops the process in the background.
func (p *Process) stalled(err error) {
	p.stallMu.Lock()
	if p.stall == nil {
		p.stall = err
	}
	p.stallMu.Unlock()
	go p.Stop()
}

// StallErr is what stalled noted, or nil.
func (p *Process) StallErr() error {
	p.stallMu.Lock()
	defer p.stallMu.Unlock()
	return p.stall
}

// ExitError describes how the child ended, for status lines.
func (p *Process) ExitError() error {
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
// line-length bound, its stdout read through a pageReader feeding capt and every write
// to its stdin bounded by writeTimeout (stdioConn). Closing the connection does not
// stop the process: the session owns it and stops it explicitly.
type processTransport struct {
	p            *Process
	capt         *Capture
	writeTimeout time.Duration
}

func (t processTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	pipe := newStdinPipe(t.p.stdin)
	conn, err := (&mcp.IOTransport{
		Reader:        newPageReader(t.p.stdout, t.capt, MaxMessageBytes),
		Writer:        pipe,
		MaxLineLength: MaxMessageBytes,
	}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newStdioConn(conn, pipe, t.writeTimeout, t.p.stalled), nil
}

// httpTransport builds the client transport for an http or sse server, with oauth
// (nil without an [servers.NAME.oauth] table) authorizing streamable HTTP requests.
// It never sets http.Client.Timeout, which would cut long-lived event streams;
// contexts bound calls.
func httpTransport(s config.Server, authz *oauth.Handler) (mcp.Transport, *boundedTransport) {
	bt := &boundedTransport{base: http.DefaultTransport, headers: s.Headers, origin: originOf(s.URL)}
	client := &http.Client{Transport: bt, CheckRedirect: sameOriginRedirect}
	if s.Transport == config.TransportSSE {
		return &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: client, MaxEventSize: MaxMessageBytes}, bt
	}
	t := &mcp.StreamableClientTransport{
		Endpoint:     s.URL,
		HTTPClient:   client,
		MaxEventSize: MaxMessageBytes,
		MaxRetries:   2,
	}
	if authz != nil {
		t.OAuthHandler = authz
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
	// origin is the configured URL's scheme://host:port: the only one the configured
	// headers are ever sent to.
	origin string
	// capt, when set, receives the raw tools/list results (streamable HTTP).
	capt *Capture
	// hist, when set, keeps every message sent and received (streamable HTTP).
	hist *History

	wantsBearer atomic.Bool
}

// ErrBodyTooLarge is returned when a server's HTTP response body exceeds MaxMessageBytes.
var ErrBodyTooLarge = errors.New("response body exceeds the size limit")

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 && originOf(req.URL.String()) == t.origin {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	listing := httpCapture(t.capt, t.hist, req)
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
	if listing || t.hist != nil {
		capt := t.capt
		if !listing {
			capt = nil
		}
		tapBody(capt, t.hist, resp)
	}
	return resp, nil
}

// OriginBoundClient is an HTTP client like every server's: it adds headers only to
// requests for url's origin, bounds JSON bodies to MaxMessageBytes, and follows no
// redirect off that origin (the bridge sends the gateway token with it).
func OriginBoundClient(url string, headers map[string]string) *http.Client {
	return &http.Client{
		Transport:     &boundedTransport{base: http.DefaultTransport, headers: headers, origin: originOf(url)},
		CheckRedirect: sameOriginRedirect,
	}
}

// maxRedirects bounds a chain of same-origin redirects.
const maxRedirects = 10

// ErrCrossOriginRedirect is returned (wrapped) when a server redirects a request to
// another origin or from https to http: configured headers and OAuth tokens are only
// ever sent to the configured origin, so airlock does not follow it.
var ErrCrossOriginRedirect = errors.New("redirect to another origin refused")

// sameOriginRedirect is the CheckRedirect of every server's HTTP client: it follows a
// redirect only within the origin (scheme, host and port) of the first request. Go's
// own rule copies Authorization to any redirect on the same host name whatever the
// port, and never drops headers set by a RoundTripper, so it is not enough.
func sameOriginRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	from, to := via[0].URL, req.URL
	if from.Scheme == "https" && to.Scheme != "https" {
		return fmt.Errorf("%w: %s redirected from https to %s; airlock never downgrades a connection that carries credentials", ErrCrossOriginRedirect, RedactURL(from.String()), RedactURL(to.String()))
	}
	if originOf(from.String()) != originOf(to.String()) {
		return fmt.Errorf("%w: %s redirected to %s; configured headers and tokens are only sent to %s; airlock does not follow it (configure the new URL if you trust it)",
			ErrCrossOriginRedirect, RedactURL(from.String()), RedactURL(to.String()), originOf(from.String()))
	}
	return nil
}

// originOf returns a URL's origin as scheme://host:port with the default port made
// explicit and the host lowercased; "" when it does not parse.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// RedactURL returns raw without userinfo ("***"), query and fragment ("…")
// when present, for errors and logs: those parts often carry a token. A string that
// does not parse as a URL is returned as "[unparseable URL]".
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "[unparseable URL]"
	}
	user := u.User != nil
	u.User = nil
	q := u.RawQuery != "" || u.ForceQuery
	u.RawQuery, u.ForceQuery = "", false
	frag := u.Fragment != ""
	u.Fragment, u.RawFragment = "", ""
	out := u.String()
	if user {
		if scheme, rest, ok := strings.Cut(out, "://"); ok {
			out = scheme + "://***@" + rest
		}
	}
	if q {
		out += "?…"
	}
	if frag {
		out += "#…"
	}
	return out
}

// urlInText finds URLs in error text: a scheme, "://" and everything up to a space or
// a quote.
var urlInText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`) })

// RedactURLs returns err with every URL in its text passed through RedactURL; errors.Is
// and errors.As still see the original chain. nil stays nil.
func RedactURLs(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	red := urlInText().ReplaceAllStringFunc(msg, func(m string) string {
		// Punctuation ending a sentence is not part of the URL.
		trimmed := strings.TrimRight(m, ".,;:)]")
		return RedactURL(trimmed) + m[len(trimmed):]
	})
	if red == msg {
		return err
	}
	return &redactedError{msg: red, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

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

// baseEnvPOSIX and baseEnvWindows are the variables of airlock's own environment every
// stdio server gets: the MCP SDKs' default set (the TypeScript SDK's
// getDefaultEnvironment), plus the locale and temporary-folder variables a program
// needs to behave on POSIX. Everything else is passed only by name (inherit_env) or
// set in the server's env.
var (
	baseEnvPOSIX   = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR", "TZ"}
	baseEnvWindows = []string{"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE",
		"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE", "PROGRAMFILES"}
)

// serverEnv is the environment a stdio server starts with: from parent (NAME=value
// entries, as os.Environ), the base set and the names in s.InheritEnv, then s.Env,
// which wins. On POSIX every LC_* variable is part of the base set. A value starting
// with "()" (an exported shell function) is never passed from the parent, as the
// TypeScript SDK does. On Windows names compare case-insensitively.
func serverEnv(s config.Server, parent []string, goos string) []string {
	windows := goos == "windows"
	base := baseEnvPOSIX
	if windows {
		base = baseEnvWindows
	}
	norm := func(k string) string {
		if windows {
			return strings.ToUpper(k)
		}
		return k
	}
	want := map[string]bool{}
	for _, k := range base {
		want[norm(k)] = true
	}
	for _, k := range s.InheritEnv {
		want[norm(k)] = true
	}
	configured := map[string]bool{}
	for k := range s.Env {
		configured[norm(k)] = true
	}
	var env []string
	for _, kv := range parent {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || configured[norm(k)] {
			continue
		}
		passed := want[norm(k)] || !windows && strings.HasPrefix(k, "LC_")
		if passed && !strings.HasPrefix(v, "()") {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		env = append(env, k+"="+s.Env[k])
	}
	return env
}

// EnvNames returns the names of the variables a stdio server receives (from airlock's
// environment now, and configured), sorted; nil for other transports. It never
// returns values, so check and the TUI can show it.
func EnvNames(s config.Server) []string {
	if s.Transport != config.TransportStdio {
		return nil
	}
	var names []string
	for _, kv := range serverEnv(s, os.Environ(), runtime.GOOS) {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, k) {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return names
}
