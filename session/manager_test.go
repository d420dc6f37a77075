package session_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/demo"
	"github.com/airlock-mcp/airlock/trust"
)

// demoSet returns the demo servers by name, for Options.InProcess.
func demoSet() map[string]*mcp.Server {
	set := demo.NewSet()
	out := map[string]*mcp.Server{}
	for _, n := range demo.Names() {
		out[n] = set.Server(n)
	}
	return out
}

func TestInProcessDemoClassification(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	for _, n := range demo.Names() {
		sessiontest.MustServer(t, m, n, model.StatusReady)
	}
	send := sessiontest.WantTier(t, m, "mail", "send_email", trust.TierDestructive)
	if send.Declared.Hints.ReadOnly == nil || !*send.Declared.Hints.ReadOnly {
		t.Errorf("mail__send_email declared readOnlyHint = %v, want the raw claim true", send.Declared.Hints.ReadOnly)
	}
	if !send.Class.Effective.OpenWorld || send.Class.Effective.ReadOnly {
		t.Errorf("mail__send_email effective = %+v, want open world, not read-only", send.Class.Effective)
	}
	if !strings.Contains(strings.Join(send.Class.Reasons, "\n"), "claims read-only") {
		t.Errorf("reasons %q do not say the server claims read-only", send.Class.Reasons)
	}
	sessiontest.WantTier(t, m, "web", "fetch_url", trust.TierRead)
	sessiontest.WantTier(t, m, "notes", "list_notes", trust.TierRead)
	sessiontest.WantTier(t, m, "notes", "create_note", trust.TierWrite)
	sessiontest.WantTier(t, m, "notes", "delete_note", trust.TierDestructive)
	sessiontest.WantTier(t, m, "docs", "search_docs", trust.TierRead)

	var trifecta *trust.Hazard
	for i, h := range m.Snapshot().Hazards {
		if h.Kind == trust.HazardLethalTrifecta {
			trifecta = &m.Snapshot().Hazards[i]
		}
	}
	if trifecta == nil {
		t.Fatalf("no lethal-trifecta hazard in %+v", m.Snapshot().Hazards)
	}
	has := func(leg, name string) bool {
		for _, n := range trifecta.Legs[leg] {
			if n == name {
				return true
			}
		}
		return false
	}
	if !has("untrusted-content", "web__fetch_url") || !has("private-data", "notes__list_notes") || !has("exfiltration", "mail__send_email") {
		t.Errorf("trifecta legs = %v", trifecta.Legs)
	}
}

func TestStdioSubprocessDemo(t *testing.T) {
	cfg := sessiontest.NewConfig(
		sessiontest.TestServer(t, "docs", "demo-docs", trust.Trusted),
		sessiontest.TestServer(t, "mail", "demo-mail", trust.Untrusted),
		sessiontest.TestServer(t, "web", "demo-web", trust.Trusted),
	)
	m := sessiontest.Start(t, cfg, session.Options{})
	for _, n := range []string{"docs", "mail", "web"} {
		sv := sessiontest.MustServer(t, m, n, model.StatusReady)
		if sv.Protocol != session.DefaultProtocol {
			t.Errorf("%s protocol = %q, want %q", n, sv.Protocol, session.DefaultProtocol)
		}
	}
	sessiontest.WantTier(t, m, "mail", "send_email", trust.TierDestructive)
	out, err := m.Call(context.Background(), model.CallRequest{Server: "web", Tool: "fetch_url", Args: sessiontest.Args(`{"url":"https://blog.example.com/mcp-tips"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sessiontest.TextOf(out.Result), "\x1b") {
		t.Errorf("the injection page lost its raw escapes on the way: %q", sessiontest.TextOf(out.Result))
	}
	if out.Verdict.Action != trust.Allow || out.Verdict.By != trust.DecidedByPolicy {
		t.Errorf("fetch_url verdict = %+v, want allow by policy", out.Verdict)
	}
}

func TestStreamableHTTPAndSSE(t *testing.T) {
	var sawAuth atomic.Value
	withAuth := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sawAuth.Store(r.Header.Get("Authorization"))
			h.ServeHTTP(w, r)
		})
	}
	docs, _ := demo.New("docs")
	stream := httptest.NewServer(withAuth(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return docs }, nil)))
	t.Cleanup(stream.Close)
	web, _ := demo.New("web")
	sse := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return web }, nil))
	t.Cleanup(sse.Close)

	cfg := sessiontest.NewConfig(
		config.Server{Name: "docs", Transport: config.TransportHTTP, URL: stream.URL, Headers: map[string]string{"Authorization": "Bearer s3cret"}, Trust: trust.Trusted, ConnectTimeout: 10 * time.Second},
		config.Server{Name: "web", Transport: config.TransportSSE, URL: sse.URL, Trust: trust.Trusted, ConnectTimeout: 10 * time.Second},
	)
	m := sessiontest.Start(t, cfg, session.Options{})
	sessiontest.MustServer(t, m, "docs", model.StatusReady)
	sessiontest.MustServer(t, m, "web", model.StatusReady)
	sessiontest.WantTier(t, m, "docs", "get_doc", trust.TierRead)
	sessiontest.WantTier(t, m, "web", "fetch_url", trust.TierRead)
	if got := sawAuth.Load(); got != "Bearer s3cret" {
		t.Errorf("Authorization header at the server = %v, want the configured one", got)
	}
	out, err := m.Call(context.Background(), model.CallRequest{Server: "docs", Tool: "search_docs", Args: sessiontest.Args(`{"query":"tier"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.IsError {
		t.Errorf("search_docs over HTTP failed: %s", sessiontest.TextOf(out.Result))
	}
}

// Hostile case 25: a huge HTTP body is cut at MaxMessageBytes and fails the connection.
func TestHostile25_HugeHTTPBodyDropped(t *testing.T) {
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"x":"`))
		chunk := []byte(strings.Repeat("a", 1<<20))
		for range 40 { // 40 MiB, more than MaxMessageBytes
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(huge.Close)
	cfg := sessiontest.NewConfig(config.Server{Name: "huge", Transport: config.TransportHTTP, URL: huge.URL, ConnectTimeout: 10 * time.Second})
	m := sessiontest.Start(t, cfg, session.Options{})
	sv := sessiontest.MustServer(t, m, "huge", model.StatusFailed)
	if sv.Err == nil {
		t.Fatal("no error for an oversized body")
	}
}

// Hostile case 22: a server that never answers initialize times out with the reason, and
// the other server is ready regardless.
func TestHostile22_HangingInitializeTimesOutOthersReady(t *testing.T) {
	hang := sessiontest.TestServer(t, "hang", "hang-init", trust.Untrusted)
	hang.ConnectTimeout = time.Second
	cfg := sessiontest.NewConfig(hang, sessiontest.TestServer(t, "docs", "demo-docs", trust.Trusted))
	begin := time.Now()
	m := sessiontest.Start(t, cfg, session.Options{})
	sv := sessiontest.MustServer(t, m, "hang", model.StatusFailed)
	if !strings.Contains(sv.Err.Error(), "connect timeout") {
		t.Errorf("hang error = %v, want it to name the connect timeout", sv.Err)
	}
	sessiontest.MustServer(t, m, "docs", model.StatusReady)
	// Generous bound: only catches a connect that ignores its timeout altogether.
	if d := time.Since(begin); d > 15*time.Second {
		t.Errorf("first attempts took %v with a 1s connect timeout", d)
	}
}

func TestProcessExitReportedWithStderr(t *testing.T) {
	cfg := sessiontest.NewConfig(sessiontest.TestServer(t, "dead", "exit-at-once", trust.Untrusted), sessiontest.TestServer(t, "docs", "demo-docs", trust.Trusted))
	m := sessiontest.Start(t, cfg, session.Options{})
	sv := sessiontest.MustServer(t, m, "dead", model.StatusFailed)
	msg := sv.Err.Error()
	if !strings.Contains(msg, "cannot open database") || !strings.Contains(msg, "exit status 7") {
		t.Errorf("error = %q, want the exit status and the stderr line", msg)
	}
	sessiontest.MustServer(t, m, "docs", model.StatusReady)
}

// Hostile case 24: closing airlock ends every stdio server's whole process group.
func TestHostile24_NoChildOutlivesAirlock(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	s := sessiontest.TestServer(t, "gc", "grandchild", trust.Trusted)
	s.Env["AIRLOCK_TEST_PIDFILE"] = pidfile
	m := session.New(sessiontest.NewConfig(s), session.Options{})
	m.Start()
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	sessiontest.MustServer(t, m, "gc", model.StatusReady)
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	if !sessiontest.Alive(pid) {
		t.Fatalf("grandchild %d is not running before Close", pid)
	}
	m.Close()
	sessiontest.WaitFor(t, "the grandchild to be gone", 10*time.Second, func() bool { return !sessiontest.Alive(pid) })
	m.Close() // idempotent
}

// Hostile case 24: a server that crashes mid-call fails the call at once (not at the call
// timeout), is shown failed with its last stderr, takes the process it started down
// with it, and reconnects on demand.
func TestHostile24_CrashMidCallFailsAtOnceGroupGone(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	s := sessiontest.TestServer(t, "crashy", "crashy", trust.Trusted)
	s.Env["AIRLOCK_TEST_PIDFILE"] = pidfile
	m := sessiontest.Start(t, sessiontest.NewConfig(s), session.Options{})
	sessiontest.MustServer(t, m, "crashy", model.StatusReady)
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	begin := time.Now()
	_, err = m.Call(context.Background(), model.CallRequest{Server: "crashy", Tool: "crash"})
	if err == nil {
		t.Fatal("a call whose server died returned no error")
	}
	if d := time.Since(begin); d > s.CallTimeout/2 {
		t.Errorf("the call failed after %v, not at once (call timeout %v)", d, s.CallTimeout)
	}
	sessiontest.WaitFor(t, "crashy to be reported failed", 10*time.Second, func() bool {
		sv, _ := m.Snapshot().Server("crashy")
		return sv.Status == model.StatusFailed
	})
	sv, _ := m.Snapshot().Server("crashy")
	if !strings.Contains(sv.Err.Error(), "simulated crash") {
		t.Errorf("status error %q does not carry the server's last stderr", sv.Err)
	}
	t.Logf("status after the crash: %v", sv.Err)
	sessiontest.WaitFor(t, "the crashed server's child to be gone", 10*time.Second, func() bool { return !sessiontest.Alive(pid) })
	if err := m.Reconnect("crashy"); err != nil {
		t.Fatal(err)
	}
	sessiontest.WaitFor(t, "crashy to be ready again", 20*time.Second, func() bool {
		sv, _ := m.Snapshot().Server("crashy")
		return sv.Status == model.StatusReady
	})
}

// Hostile case 23: a server that never answers tools/call is timed out and sent
// notifications/cancelled (the server says it saw the cancellation), and stays usable.
func TestHostile23_CallTimeoutSendsCancelled(t *testing.T) {
	s := sessiontest.TestServer(t, "crashy", "crashy", trust.Trusted)
	s.CallTimeout = 300 * time.Millisecond
	m := sessiontest.Start(t, sessiontest.NewConfig(s), session.Options{})
	_, err := m.Call(context.Background(), model.CallRequest{Server: "crashy", Tool: "slow"})
	if err == nil || !strings.Contains(err.Error(), "call timeout") {
		t.Fatalf("err = %v, want a call timeout", err)
	}
	sessiontest.WaitFor(t, "the server to see notifications/cancelled", 10*time.Second, func() bool {
		return strings.Contains(strings.Join(m.Stderr("crashy"), "\n"), "slow: cancelled by the client")
	})
	sessiontest.MustServer(t, m, "crashy", model.StatusReady)
}

func TestRawAnnotationsAbsentVsFalse(t *testing.T) {
	script := `{"pages":[{"tools":[
		{"name":"bare","inputSchema":{"type":"object"}},
		{"name":"empty","inputSchema":{"type":"object"},"annotations":{}},
		{"name":"explicit","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":false}},
		{"name":"liar","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}
	]}]}`
	m := sessiontest.Start(t, sessiontest.NewConfig(sessiontest.RawServer(t, "raw", trust.Trusted, script), sessiontest.RawServer(t, "rawu", trust.Untrusted, script)), session.Options{})
	bare := sessiontest.MustTool(t, m, "raw", "bare")
	if bare.Declared.Raw != nil || bare.Declared.Hints.ReadOnly != nil {
		t.Errorf("bare: declared = %+v, want absent", bare.Declared)
	}
	empty := sessiontest.MustTool(t, m, "raw", "empty")
	if string(empty.Declared.Raw) != "{}" || empty.Declared.Hints.ReadOnly != nil {
		t.Errorf("empty: declared = %s %+v, want {} with absent hints", empty.Declared.Raw, empty.Declared.Hints)
	}
	explicit := sessiontest.WantTier(t, m, "raw", "explicit", trust.TierWrite)
	if explicit.Declared.Hints.ReadOnly == nil || *explicit.Declared.Hints.ReadOnly {
		t.Errorf("explicit: readOnlyHint = %v, want declared false", explicit.Declared.Hints.ReadOnly)
	}
	sessiontest.WantTier(t, m, "raw", "bare", trust.TierDestructive)
	sessiontest.WantTier(t, m, "raw", "liar", trust.TierRead)
	for _, name := range []string{"bare", "empty", "explicit", "liar"} {
		ti := sessiontest.WantTier(t, m, "rawu", name, trust.TierDestructive)
		if !ti.Class.Effective.OpenWorld {
			t.Errorf("rawu__%s: untrusted server's tool is not open world", name)
		}
	}
}

// Hostile case 26: however many list_changed notifications arrive, at most one tools/list
// is in flight, plus one trailing.
func TestHostile26_ListChangedOneRefreshInFlight(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "churn", Version: "1"}, nil)
	var inFlight, maxInFlight, lists atomic.Int32
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/list" {
				return next(ctx, method, req)
			}
			lists.Add(1)
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				old := maxInFlight.Load()
				if n <= old || maxInFlight.CompareAndSwap(old, n) {
					break
				}
			}
			time.Sleep(5 * time.Millisecond) // make overlapping refreshes likely if allowed
			return next(ctx, method, req)
		}
	})
	add := func(i int) {
		mcp.AddTool(srv, &mcp.Tool{Name: "t" + strconv.Itoa(i)}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	add(0)
	m := sessiontest.Start(t, sessiontest.NewConfig(config.Server{Name: "churn", Trust: trust.Trusted}), session.Options{InProcess: map[string]*mcp.Server{"churn": srv}})
	const n = 300
	for i := 1; i < n; i++ {
		add(i)
	}
	sessiontest.WaitFor(t, "every added tool to be listed", 20*time.Second, func() bool {
		return len(m.Snapshot().Tools) == n
	})
	if got := maxInFlight.Load(); got != 1 {
		t.Errorf("%d tools/list requests were in flight at once, want 1", got)
	}
	if got := lists.Load(); got > n/2 {
		t.Errorf("%d tools/list requests for %d notifications: not coalesced", got, n)
	}
	t.Logf("%d notifications caused %d tools/list requests", n-1, lists.Load())
}

func TestBlockedServerIsNotStarted(t *testing.T) {
	s := sessiontest.TestServer(t, "nope", "exit-at-once", trust.BlockedServer)
	m := sessiontest.Start(t, sessiontest.NewConfig(s), session.Options{})
	sv := sessiontest.MustServer(t, m, "nope", model.StatusFailed)
	if !strings.Contains(sv.Err.Error(), "blocked") {
		t.Errorf("err = %v", sv.Err)
	}
	if len(m.Stderr("nope")) != 0 {
		t.Errorf("a blocked server was started: stderr %q", m.Stderr("nope"))
	}
}

func TestCallUnknownTool(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	_, err := m.Call(context.Background(), model.CallRequest{Server: "docs", Tool: "nope"})
	if !errors.Is(err, session.ErrNoTool) {
		t.Errorf("err = %v, want ErrNoTool", err)
	}
	_, err = m.Call(context.Background(), model.CallRequest{Server: "docs", Tool: "get_doc", Args: sessiontest.Args(`[1]`)})
	if err == nil || !strings.Contains(err.Error(), "JSON object") {
		t.Errorf("err = %v, want arguments must be an object", err)
	}
}

// An old server that exits on any method it does not know (such as the 2026-07-28
// server/discover probe) still connects with the automatic protocol choice, and a
// go-sdk server connects with the modern protocol when it is asked for.
func TestProtocolChoice(t *testing.T) {
	old := sessiontest.RawServer(t, "old", trust.Trusted, `{"exit_on_unknown":true,"pages":[{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}]}`)
	docs, _ := demo.New("docs")
	modern := config.Server{Name: "modern", Protocol: "2026-07-28", Trust: trust.Trusted}
	auto := config.Server{Name: "auto", Trust: trust.Trusted}
	web, _ := demo.New("web")
	m := sessiontest.Start(t, sessiontest.NewConfig(auto, modern, old), session.Options{InProcess: map[string]*mcp.Server{"modern": docs, "auto": web}})
	if sv := sessiontest.MustServer(t, m, "old", model.StatusReady); sv.Protocol != "2025-06-18" {
		t.Errorf("old server protocol = %q", sv.Protocol)
	}
	if sv := sessiontest.MustServer(t, m, "modern", model.StatusReady); sv.Protocol != "2026-07-28" {
		t.Errorf("modern protocol = %q, want 2026-07-28", sv.Protocol)
	}
	if sv := sessiontest.MustServer(t, m, "auto", model.StatusReady); sv.Protocol != session.DefaultProtocol {
		t.Errorf("auto protocol = %q", sv.Protocol)
	}
	sessiontest.WantTier(t, m, "modern", "get_doc", trust.TierRead)
}

// Over streamable HTTP the server's own messages reach airlock on the standalone event
// stream: a rug pull's tools/list_changed arrives and blocks the changed tool. (A
// wrapper around go-sdk's HTTP connection used to hide the hook that opens that
// stream.) Both response kinds (event stream and plain JSON) are captured raw.
func TestStreamableHTTPListChangedAndRawCapture(t *testing.T) {
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResponse), func(t *testing.T) {
			set := demo.NewSet()
			srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return set.Notes().Server() },
				&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))
			t.Cleanup(srv.Close)
			cfg := sessiontest.NewConfig(config.Server{Name: "notes", Transport: config.TransportHTTP, URL: srv.URL, Trust: trust.Trusted, ConnectTimeout: 10 * time.Second})
			m := sessiontest.Start(t, cfg, session.Options{})
			ti := sessiontest.WantTier(t, m, "notes", "create_note", trust.TierWrite)
			if ti.Declared.Raw == nil || ti.Declared.Hints.Destructive == nil {
				t.Fatalf("declared annotations not captured raw over HTTP: %+v", ti.Declared)
			}
			set.Notes().RugPull()
			sessiontest.WaitFor(t, "the rug pull to reach airlock over HTTP", 10*time.Second, func() bool {
				ti, _ := m.Snapshot().Tool("notes", "create_note")
				return ti.Pin == trust.PinChanged
			})
		})
	}
}
