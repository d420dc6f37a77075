//go:build unix

package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// stallServer is a "stall" test server with the given flags (serveStall) and the file
// it writes its pids to.
func stallServer(t *testing.T, name, flags string) (config.Server, string) {
	t.Helper()
	s := sessiontest.TestServer(t, name, "stall", trust.Trusted)
	pidfile := filepath.Join(t.TempDir(), "pids")
	s.Env["AIRLOCK_TEST_STALL"] = flags
	s.Env["AIRLOCK_TEST_PIDFILE"] = pidfile
	return s, pidfile
}

// stallPids reads the pids a stall server wrote: its own, then its child's.
func stallPids(t *testing.T, pidfile string) []int {
	t.Helper()
	var pids []int
	sessiontest.WaitFor(t, "the stall server's pids", 10*time.Second, func() bool {
		b, err := os.ReadFile(pidfile)
		if err != nil {
			return false
		}
		pids = nil
		for f := range strings.FieldsSeq(string(b)) {
			n, err := strconv.Atoi(f)
			if err != nil {
				return false
			}
			pids = append(pids, n)
		}
		return len(pids) > 0
	})
	return pids
}

// bigArgs is a 100 KB argument object: more than a pipe holds, so writing it to a
// server that does not read blocks.
func bigArgs() json.RawMessage {
	return json.RawMessage(`{"data":"` + strings.Repeat("A", 100<<10) + `"}`)
}

// within runs f and returns how long it took. If f has not returned after limit the
// test fails, and pids are killed first so that what f waits on comes loose and the
// test can end.
func within(t *testing.T, what string, limit time.Duration, pids []int, f func()) time.Duration {
	t.Helper()
	begin := time.Now()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return time.Since(begin)
	case <-time.After(limit):
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	<-done
	t.Fatalf("%s took %v and had not returned after %v (returned once the server was killed)", what, time.Since(begin).Round(time.Millisecond), limit)
	return 0
}

// goneWithin fails the test unless every pid has ended within d.
func goneWithin(t *testing.T, pids []int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for _, pid := range pids {
		for sessiontest.Alive(pid) {
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("process %d of the server is still running", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// auditedStall starts a Manager that audits to a fresh log, with one stall server
// (flags as serveStall reads them) whose call timeout is a second, and waits for it
// to be ready. It returns the Manager, the server, the audit log's path and the
// server's pids. The log is closed when the test ends, before the Manager is.
func auditedStall(t *testing.T, flags string) (*session.Manager, config.Server, string, []int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s, pidfile := stallServer(t, "stall", flags)
	s.CallTimeout = time.Second
	m := sessiontest.Start(t, sessiontest.NewConfig(s), session.Options{Audit: a})
	t.Cleanup(func() { a.Close() })
	sessiontest.MustServer(t, m, "stall", model.StatusReady)
	return m, s, path, stallPids(t, pidfile)
}

// A call to a server that stopped reading its stdin, with an argument larger than the
// pipe holds, ends at the call timeout with a "timeout" outcome in the audit log, and
// the server, which can take no more requests, is shown failed.
func TestStalledServer_LargeCallEndsAtCallTimeout(t *testing.T) {
	m, s, path, pids := auditedStall(t, "read")

	var out *session.Outcome
	var callErr error
	took := within(t, "the call", 10*time.Second, pids, func() {
		out, callErr = m.Call(context.Background(), model.CallRequest{Server: "stall", Tool: "take", Args: bigArgs()})
	})
	if !errors.Is(callErr, session.ErrCallTimeout) {
		t.Errorf("err = %v, want the call timeout", callErr)
	}
	if out == nil {
		t.Fatal("no outcome for a call that was forwarded")
	}
	// out.Duration is the forwarded part, which the call timeout bounds; the rest
	// (deciding, auditing 100 KB of arguments) comes before it.
	t.Logf("the forwarded call ended after %v (call timeout %v), Call returned after %v: %v",
		out.Duration.Round(time.Millisecond), s.CallTimeout, took.Round(time.Millisecond), callErr)
	if out.Duration > s.CallTimeout+time.Second {
		t.Errorf("the call ended %v after the call timeout", out.Duration-s.CallTimeout)
	}
	var decided, timedOut bool
	for _, r := range sessiontest.AuditRecords(t, path) {
		if r.CallID != out.CallID {
			continue
		}
		decided = decided || r.Kind == "decision" && r.Decision == "allow"
		if r.Kind == "outcome" {
			timedOut = r.Outcome == "timeout"
			if !timedOut {
				t.Errorf("outcome record = %q (%s), want timeout", r.Outcome, r.Error)
			}
		}
	}
	if !decided || !timedOut {
		t.Errorf("audit log: decision %v, timeout outcome %v; want both", decided, timedOut)
	}
	sessiontest.WaitFor(t, "the stalled server to be shown failed", 10*time.Second, func() bool {
		sv, _ := m.Snapshot().Server("stall")
		return sv.Status == model.StatusFailed
	})
	sv, _ := m.Snapshot().Server("stall")
	t.Logf("status: %v", sv.Err)
	if !strings.Contains(sv.Err.Error(), "stopped reading") {
		t.Errorf("status error %q does not say the server stopped reading", sv.Err)
	}
	goneWithin(t, pids, 10*time.Second)
}

// A server that answers a call with half a message and then stalls (reading on,
// writing nothing) ends the call at the call timeout, audited "timeout"; the half
// line it left in the reader does not hold up closing it.
func TestStalledServer_HalfAnswerEndsAtCallTimeout(t *testing.T) {
	m, _, path, pids := auditedStall(t, "half,noterm")
	var out *session.Outcome
	var callErr error
	took := within(t, "the call", 10*time.Second, pids, func() {
		out, callErr = m.Call(context.Background(), model.CallRequest{Server: "stall", Tool: "take", Args: json.RawMessage(`{}`)})
	})
	t.Logf("the call answered with half a message returned after %v: %v", took.Round(time.Millisecond), callErr)
	if !errors.Is(callErr, session.ErrCallTimeout) || out == nil {
		t.Fatalf("err = %v (outcome %v), want the call timeout", callErr, out)
	}
	outcomes := 0
	for _, r := range sessiontest.AuditRecords(t, path) {
		if r.CallID == out.CallID && r.Kind == "outcome" {
			outcomes++
			if r.Outcome != "timeout" {
				t.Errorf("outcome record = %q (%s), want timeout", r.Outcome, r.Error)
			}
		}
	}
	if outcomes != 1 {
		t.Errorf("%d outcome records for the call, want 1", outcomes)
	}
	took = within(t, "Close", 10*time.Second, pids, func() { m.Close() })
	t.Logf("Close took %v", took.Round(time.Millisecond))
	goneWithin(t, pids, 2*time.Second)
}

// stallKinds are the stalled servers Close and Reconnect must not wait on.
var stallKinds = []struct{ name, flags string }{
	{"not-reading", "read"},
	{"not-writing", "write"},
	{"not-reading-ignoring-sigterm", "read,noterm"},
	{"child-holding-pipes", "read,noterm,child"},
	{"pinging-not-reading", "pings,read,noterm"},
	{"half-an-answer-ignoring-sigterm", "half,noterm"},
}

// stalledWithCall starts a Manager with one stall server and a call to it under way
// (its 100 KB argument stuck in the pipe, or its answer never coming), with a call
// timeout far longer than the test waits. It returns the server's pids and a channel
// that is closed when the call returns.
func stalledWithCall(t *testing.T, flags string) (*session.Manager, []int, chan struct{}) {
	t.Helper()
	s, pidfile := stallServer(t, "stall", flags)
	s.CallTimeout = time.Minute
	m := sessiontest.Start(t, sessiontest.NewConfig(s), session.Options{})
	sessiontest.MustServer(t, m, "stall", model.StatusReady)
	pids := stallPids(t, pidfile)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		_, _ = m.Call(context.Background(), model.CallRequest{Server: "stall", Tool: "take", Args: bigArgs()})
	}()
	sessiontest.WaitFor(t, "the server to stall", 10*time.Second, func() bool {
		return strings.Contains(strings.Join(m.Stderr("stall"), "\n"), "stalled")
	})
	time.Sleep(300 * time.Millisecond) // the call is written, or stuck writing
	return m, pids, returned
}

// wantStallEnded fails the test unless, after what (Close or Reconnect), every pid
// of the stalled server ends within 2 s and the call under way (returned) within 5 s.
func wantStallEnded(t *testing.T, pids []int, returned <-chan struct{}, what string) {
	t.Helper()
	goneWithin(t, pids, 2*time.Second)
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Error("the call under way had not returned 5 s after " + what)
	}
}

// Close returns within 5 s whatever the server does (about 1 s, 2 s when SIGTERM is
// ignored; the test fails only past 10 s, so that a loaded machine does not fail it),
// and takes its whole process tree with it; the call under way returns too.
func TestStalledServer_CloseWithin5s(t *testing.T) {
	for _, k := range stallKinds {
		t.Run(k.name, func(t *testing.T) {
			m, pids, returned := stalledWithCall(t, k.flags)
			took := within(t, "Close", 10*time.Second, pids, func() { m.Close() })
			t.Logf("Close with a %s server took %v", k.name, took.Round(time.Millisecond))
			wantStallEnded(t, pids, returned, "Close")
		})
	}
}

// Reconnect replaces a stalled server within 5 s (as Close; the test fails only past
// 10 s): the old process tree is gone and the new connection is ready.
func TestStalledServer_ReconnectWithin5s(t *testing.T) {
	for _, k := range stallKinds {
		t.Run(k.name, func(t *testing.T) {
			m, pids, returned := stalledWithCall(t, k.flags)
			old, _ := m.Snapshot().Server("stall")
			took := within(t, "Reconnect", 10*time.Second, pids, func() {
				if err := m.Reconnect("stall"); err != nil {
					t.Error(err)
					return
				}
				for {
					sv, _ := m.Snapshot().Server("stall")
					if sv.Gen > old.Gen && sv.Status == model.StatusReady {
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			})
			t.Logf("Reconnect with a %s server took %v", k.name, took.Round(time.Millisecond))
			wantStallEnded(t, pids, returned, "Reconnect")
		})
	}
}

// An agent's call through the gateway to a server that stopped reading its stdin is
// answered once the call timeout ends it: the agent's request, and its connection,
// are not held for as long as the server stalls.
func TestStalledServer_AgentCallThroughGatewayEnds(t *testing.T) {
	s, pidfile := stallServer(t, "stall", "read")
	s.CallTimeout = time.Second
	m := sessiontest.Start(t, sessiontest.NewConfig(s), session.Options{})
	pids := stallPids(t, pidfile)
	g := startGateway(t, m)
	cs := agent(t, g, nil)
	var res *mcp.CallToolResult
	var err error
	took := within(t, "the agent's call", 10*time.Second, pids, func() {
		res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "stall__take", Arguments: map[string]any{"data": strings.Repeat("A", 100<<10)}})
	})
	t.Logf("the agent's call was answered after %v (call timeout %v)", took.Round(time.Millisecond), s.CallTimeout)
	switch {
	case err != nil:
		if !strings.Contains(err.Error(), "call timeout") {
			t.Errorf("err = %v, want the call timeout", err)
		}
	case !res.IsError || !strings.Contains(sessiontest.TextOf(res), "call timeout"):
		t.Errorf("result = %q (error %v), want the call timeout", sessiontest.TextOf(res), res.IsError)
	}
}

// A streamable HTTP server that never answers a call does not hold up Close: go-sdk's
// close waits for the call in flight, and there is no process to stop, so only
// closing's own grace bounds it.
func TestStalledServer_HTTPServerCloseWithin5s(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "hang", Version: "1"}, nil)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	mcp.AddTool(srv, &mcp.Tool{Name: "take", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			entered <- struct{}{}
			<-release // not the request's context: the server stalls whatever the client does
			return &mcp.CallToolResult{}, nil, nil
		})
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
		upstream.Close()
	})
	m := sessiontest.Start(t, sessiontest.NewConfig(config.Server{Name: "hang", Transport: config.TransportHTTP, URL: upstream.URL,
		Trust: trust.Trusted, ConnectTimeout: 10 * time.Second, CallTimeout: time.Minute}), session.Options{})
	sessiontest.MustServer(t, m, "hang", model.StatusReady)
	go func() {
		_, _ = m.Call(context.Background(), model.CallRequest{Server: "hang", Tool: "take", Args: json.RawMessage(`{}`)})
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the call never reached the server")
	}
	began := time.Now()
	closed := make(chan struct{})
	go func() { defer close(closed); m.Close() }()
	select {
	case <-closed:
		t.Logf("Close with a call stalled on an HTTP server took %v", time.Since(began).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		released = true
		close(release)
		<-closed
		t.Fatalf("Close took %v and had not returned after 10s (returned once the server answered)", time.Since(began).Round(time.Millisecond))
	}
}
