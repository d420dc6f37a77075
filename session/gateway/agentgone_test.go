package gateway_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/conn"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/trust"
)

// goneRig is a Manager with one real stdio server whose destructive tool leaves a
// marker file, an audit log, a gateway, and a person who sees every question and
// never answers.
type goneRig struct {
	m         *session.Manager
	g         *gateway.Gateway
	a         *sessiontest.Answerer
	marker    string
	auditPath string
}

func newGoneRig(t *testing.T) *goneRig {
	t.Helper()
	srv, marker, auditPath, al := markerServer(t)
	t.Cleanup(func() { al.Close() })
	r := &goneRig{marker: marker, auditPath: auditPath}
	cfg := sessiontest.NewConfig(srv)
	cfg.ApprovalTimeout = time.Minute
	r.m = sessiontest.Start(t, cfg, session.Options{Audit: al})
	r.a = sessiontest.AnswerWith(t, r.m)
	r.g = startGateway(t, r.m)
	return r
}

// question waits for the wipe call's question.
func (r *goneRig) question(t *testing.T) *model.Pending {
	t.Helper()
	select {
	case p := <-r.a.Seen:
		return p
	case <-time.After(20 * time.Second):
		t.Fatal("the agent's call never asked")
		return nil
	}
}

// wantGone checks that the question p, whose agent left at left, is withdrawn within
// a second, is audited agent-gone, cannot be allowed any more, and never ran.
func (r *goneRig) wantGone(t *testing.T, p *model.Pending, left time.Time, how string) {
	t.Helper()
	deadline := left.Add(10 * time.Second)
	for len(r.m.Engine().Pending()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the question still waits %v after its agent left", how, time.Since(left).Round(time.Millisecond))
		}
		time.Sleep(5 * time.Millisecond)
	}
	took := time.Since(left)
	t.Logf("%s: question withdrawn %v after the agent left", how, took.Round(time.Millisecond))
	if took > 2*time.Second {
		t.Errorf("%s: the question was withdrawn only %v after its agent left, want about a second at most", how, took)
	}
	if err := r.m.Engine().Answer(p.ID, model.Response{Answer: model.AllowOnce}); err == nil {
		t.Errorf("%s: the person could still allow the withdrawn question", how)
	}
	sessiontest.WaitFor(t, "the agent-gone decision record", 5*time.Second, func() bool {
		for _, rec := range sessiontest.AuditRecords(t, r.auditPath) {
			if rec.CallID == p.CallID && rec.Kind == "decision" {
				return true
			}
		}
		return false
	})
	for _, rec := range sessiontest.AuditRecords(t, r.auditPath) {
		if rec.CallID != p.CallID {
			continue
		}
		if rec.Kind != "decision" || rec.Decision != "deny" || rec.DecidedBy != string(trust.DecidedByAgentGone) {
			t.Errorf("%s: audit record %s %s decided_by %q (%s), want one deny decided_by %q", how, rec.Kind, rec.Decision, rec.DecidedBy, rec.Reason, trust.DecidedByAgentGone)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(r.marker); err == nil {
		t.Errorf("%s: the tool ran for an agent that had left", how)
	}
}

// An agent whose HTTP connection drops while its call waits (killed, its read timed
// out): the POST's connection closing withdraws the question.
func TestAgentGone_ConnectionClosed(t *testing.T) {
	r := newGoneRig(t)
	var mu sync.Mutex
	var conns []net.Conn
	dialer := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
		return c, err
	}}
	client := mcp.NewClient(&mcp.Implementation{Name: "dropped-agent", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   r.g.URL(),
		HTTPClient: &http.Client{Transport: headerRT2{tr, testToken}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wipe__wipe", Arguments: map[string]any{}})
	}()
	p := r.question(t)
	left := time.Now()
	mu.Lock()
	for _, c := range conns {
		_ = c.Close()
	}
	mu.Unlock()
	r.wantGone(t, p, left, "connection closed")
}

// headerRT2 adds the bearer token over a given transport.
type headerRT2 struct {
	rt    http.RoundTripper
	token string
}

func (h headerRT2) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+h.token)
	return h.rt.RoundTrip(r)
}

// DELETE of a session whose call waits returns at once and withdraws the question;
// the call never runs.
func TestAgentGone_SessionDeleted(t *testing.T) {
	r := newGoneRig(t)
	cs := agent(t, r.g, nil)
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wipe__wipe", Arguments: map[string]any{}})
	}()
	p := r.question(t)
	req := deleteSession(r.g, cs)
	left := time.Now()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("DELETE of a session with a waiting call: %v after %v", err, time.Since(left).Round(time.Millisecond))
	}
	resp.Body.Close()
	took := time.Since(left)
	t.Logf("DELETE with a waiting call answered %d in %v", resp.StatusCode, took.Round(time.Microsecond))
	if took > time.Second {
		t.Errorf("DELETE took %v with a call waiting", took)
	}
	r.wantGone(t, p, left, "session deleted")
}

// A stdio agent behind the bridge whose stdin closes (its terminal closed): the
// bridge ends its session and the question is withdrawn.
func TestAgentGone_BridgeStdinClosed(t *testing.T) {
	r := newGoneRig(t)
	agentR, bridgeW := io.Pipe()
	bridgeR, agentW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- gateway.Bridge(context.Background(), gateway.Link{Client: conn.OriginBoundClient, MaxMessageBytes: conn.MaxMessageBytes}, r.g.URL(), testToken, bridgeR, bridgeW)
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-agent", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: agentR, Writer: agentW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wipe__wipe", Arguments: map[string]any{}})
	}()
	p := r.question(t)
	left := time.Now()
	_ = agentW.Close() // the bridge's stdin ends
	r.wantGone(t, p, left, "bridge stdin closed")
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("the bridge did not end after its stdin closed")
	}
	_ = agentR.Close()
}

// killWhileAsked starts the agent process cmd, kills it once its wipe call asks,
// and checks (wantGone, named how) that the question goes with it.
func (r *goneRig) killWhileAsked(t *testing.T, cmd *exec.Cmd, how string) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := r.question(t)
	left := time.Now()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	r.wantGone(t, p, left, how)
}

// deleteSession is the DELETE request with which an agent ends its gateway session
// cs, as a streamable HTTP client sends it when it leaves.
func deleteSession(g *gateway.Gateway, cs *mcp.ClientSession) *http.Request {
	req, _ := http.NewRequest(http.MethodDelete, g.URL(), nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	return req
}

// A real agent process killed while its call waits.
func TestAgentGone_AgentProcessKilled(t *testing.T) {
	r := newGoneRig(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), sessiontest.EnvServer+"=agent-call", "AIRLOCK_TEST_URL="+r.g.URL(),
		"AIRLOCK_TEST_TOKEN="+testToken, "AIRLOCK_TEST_TOOL=wipe__wipe", "GORACE=atexit_sleep_ms=0")
	r.killWhileAsked(t, cmd, "go-sdk agent killed")
}

// The TypeScript SDK's agent (bench/agent/agent.mjs), killed while its call waits.
func TestAgentGone_TypeScriptAgentKilled(t *testing.T) {
	r := newGoneRig(t)
	cmd := typeScriptAgent(t, r.g, "-tool", "wipe__wipe", "-args", "{}", "-n", "1", "-warmup", "0")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	r.killWhileAsked(t, cmd, "TypeScript agent killed")
}

// markerServer is a "marker" test server (serveMarker) with the path of the file its
// wipe tool leaves, and an audit log opened on a fresh path, for the caller to close.
func markerServer(t *testing.T) (srv config.Server, marker, auditPath string, al *audit.Log) {
	t.Helper()
	dir := t.TempDir()
	marker, auditPath = filepath.Join(dir, "ran"), filepath.Join(dir, "audit.jsonl")
	srv = sessiontest.TestServer(t, "wipe", "marker", trust.Untrusted)
	srv.Env["AIRLOCK_TEST_MARKER"] = marker
	al, err := audit.Open(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	return srv, marker, auditPath, al
}

// The last check before forwarding: a call the person allowed at the moment its
// agent left is not forwarded.
func TestAgentGone_AllowedAsItsAgentLeftNeverRuns(t *testing.T) {
	srv, marker, auditPath, al := markerServer(t)
	defer al.Close()
	ctx, leave := context.WithCancelCause(context.Background())
	// The answer "allow" and the agent's leaving cross: the approver sees the yes
	// through, the call's context has already ended.
	approver := model.ApproverFunc(func(context.Context, *model.Pending) (model.Response, error) {
		leave(model.ErrAgentGone)
		return model.Response{Answer: model.AllowOnce}, nil
	})
	m := sessiontest.Start(t, sessiontest.NewConfig(srv), session.Options{Audit: al, Approver: approver})
	_, err := m.Call(ctx, model.CallRequest{Context: "agent-x", Client: "x", Server: "wipe", Tool: "wipe", Args: sessiontest.Args(`{}`)})
	if err == nil {
		t.Fatal("a call allowed as its agent left was forwarded and answered")
	}
	if !errors.Is(err, model.ErrAgentGone) {
		var denied *model.DeniedError
		if !errors.As(err, &denied) || denied.Verdict.By != trust.DecidedByAgentGone {
			t.Errorf("error %v, want the agent's leaving", err)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the tool ran for an agent that had left")
	}
	var decided []string
	for _, rec := range sessiontest.AuditRecords(t, auditPath) {
		decided = append(decided, rec.Kind+":"+rec.Decision+":"+rec.DecidedBy)
	}
	if len(decided) != 1 || decided[0] != "decision:deny:"+string(trust.DecidedByAgentGone) {
		t.Errorf("audit %v, want one deny decided_by agent-gone", decided)
	}
}

// A read (and likewise a get, a completion, a subscription) is bound like a call: a
// read waiting for a person is withdrawn when its agent's session is deleted.
func TestAgentGone_WaitingReadWithdrawnWithItsSession(t *testing.T) {
	f := startRelay(t, trust.Untrusted, betaResourcesAsk)
	a := sessiontest.AnswerWith(t, f.m) // sees, never answers
	cs := agent(t, f.g, nil)
	go func() {
		_, _ = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: gateway.RelayURI("beta", "test://same/readme")})
	}()
	p := <-a.Seen
	req := deleteSession(f.g, cs)
	left := time.Now()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("DELETE of a session with a waiting read: %v", err)
	}
	resp.Body.Close()
	sessiontest.WaitFor(t, "the read's question to be withdrawn", 2*time.Second, func() bool { return len(f.m.Engine().Pending()) == 0 })
	t.Logf("read's question withdrawn %v after DELETE", time.Since(left).Round(time.Millisecond))
	if err := f.m.Engine().Answer(p.ID, model.Response{Answer: model.AllowOnce}); err == nil {
		t.Error("the person could still allow a read whose agent left")
	}
}

// The agent leaves after the last check, while the allowed call's decision is being
// written: the call is still not forwarded, and its outcome record says so.
func TestAgentGone_LeftWhileTheDecisionWasWrittenNeverRuns(t *testing.T) {
	srv, marker, auditPath, al := markerServer(t)
	defer al.Close()
	ctx, leave := context.WithCancelCause(context.Background())
	var allowed atomic.Bool
	approver := model.ApproverFunc(func(context.Context, *model.Pending) (model.Response, error) {
		allowed.Store(true)
		return model.Response{Answer: model.AllowOnce}, nil
	})
	// The clock is read to stamp the allowed call's decision record: that is after
	// the last check and before the forward, and there the agent leaves.
	now := func() time.Time {
		if allowed.Load() && calledFrom("auditDecision") {
			leave(model.ErrAgentGone)
		}
		return time.Now()
	}
	m := sessiontest.Start(t, sessiontest.NewConfig(srv), session.Options{Audit: al, Approver: approver, Now: now})
	_, err := m.Call(ctx, model.CallRequest{Context: "agent-x", Client: "x", Server: "wipe", Tool: "wipe", Args: sessiontest.Args(`{}`)})
	if ctx.Err() == nil {
		t.Fatal("the test never crossed the decision record")
	}
	if !errors.Is(err, model.ErrAgentGone) {
		t.Errorf("error %v, want the agent's leaving", err)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Error("the tool ran for an agent that had left")
	}
	var got []string
	for _, rec := range sessiontest.AuditRecords(t, auditPath) {
		got = append(got, rec.Kind+":"+rec.Decision+rec.Outcome+": "+rec.Error)
	}
	if len(got) != 2 || got[0] != "decision:allow: " || !strings.Contains(got[1], "not forwarded") {
		t.Errorf("audit %q, want the allow decision and an outcome saying the call was not forwarded", got)
	}
}

// calledFrom reports whether a function whose name ends in name is on the caller's
// stack.
func calledFrom(name string) bool {
	pc := make([]uintptr, 16)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, "."+name) {
			return true
		}
		if !more {
			return false
		}
	}
}
