package gateway_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/demo"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/trust"
)

var testToken = strings.Repeat("5ec2e7", 8)

// startGateway starts a gateway over m on 127.0.0.1:0 that accepts testToken as its
// default token and the named tokens kept in a state dir of its own
// (gatewayStateDir; agentWithToken adds them).
func startGateway(t *testing.T, m *session.Manager) *gateway.Gateway {
	t.Helper()
	dir := t.TempDir()
	g, err := gateway.New(m, gateway.Options{Listen: "127.0.0.1:0", Token: testToken, TokensFile: gateway.TokensPath(dir), WaitingEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	gatewayDirs.Store(g, dir)
	t.Cleanup(func() { g.Close(); gatewayDirs.Delete(g) })
	return g
}

// gatewayDirs is the state dir of each gateway startGateway started.
var gatewayDirs sync.Map

// gatewayStateDir is where g's named tokens are kept.
func gatewayStateDir(t *testing.T, g *gateway.Gateway) string {
	t.Helper()
	dir, ok := gatewayDirs.Load(g)
	if !ok {
		t.Fatal("the gateway was not started by startGateway")
	}
	return dir.(string)
}

// namedToken adds the named token name to g's state dir, as `airlock gateway token
// add` does from another process, and returns its value.
func namedToken(t *testing.T, g *gateway.Gateway, name string) string {
	t.Helper()
	tok, err := gateway.AddToken(gatewayStateDir(t, g), name, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// agentWithToken connects a go-sdk client named client to g with the bearer token tok.
func agentWithToken(t *testing.T, g *gateway.Gateway, tok, client string) (*mcp.ClientSession, error) {
	t.Helper()
	cs, err := dialGateway(t, g, tok, client, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// agent connects a real go-sdk client to the gateway, as an AI agent would.
func agent(t *testing.T, g *gateway.Gateway, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := dialGateway(t, g, testToken, "test-agent", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func resultText(res *mcp.CallToolResult) string { return sessiontest.TextOf(res) }

func TestGatewayAgentCalls(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{}, func(c *config.Config) { c.ApprovalTimeout = 300 * time.Millisecond })
	a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.AllowOnce}, model.Response{Answer: model.Deny, Reason: "not today"})
	g := startGateway(t, m)
	cs := agent(t, g, nil)
	ctx := context.Background()

	tools := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tool.Name] = tool
	}
	// The agent sees exactly the upstream tools that are not blocked;
	// nothing it can call answers an approval (that is Engine.Answer, the person's).
	served := 0
	for _, ti := range m.Snapshot().Tools {
		if ti.Class.Tier != trust.TierBlocked && ti.Exposed {
			served++
			if tools[ti.Ref.Qualified()] == nil {
				t.Errorf("gateway does not serve %s", ti.Ref.Qualified())
			}
		}
	}
	if len(tools) != served {
		t.Errorf("gateway serves %d tools, want exactly the %d upstream ones", len(tools), served)
	}
	for _, want := range []string{"docs__search_docs", "web__fetch_url", "notes__delete_note", "mail__send_email"} {
		if tools[want] == nil {
			t.Errorf("gateway does not list %s (has %d tools)", want, len(tools))
		}
	}
	// Effective annotations, not the lie: mail claims read-only, the agent is told otherwise.
	if send := tools["mail__send_email"]; send != nil {
		an := send.Annotations
		if an == nil || an.ReadOnlyHint || an.DestructiveHint == nil || !*an.DestructiveHint || an.OpenWorldHint == nil || !*an.OpenWorldHint {
			t.Errorf("mail__send_email annotations at the gateway = %+v, want the effective ones", an)
		}
	}

	// 1. An allowed tool runs without anybody being asked.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docs__search_docs", Arguments: map[string]any{"query": "tier"}})
	if err != nil || res.IsError {
		t.Fatalf("allowed call: %v %s", err, resultText(res))
	}
	sessiontest.NoAsk(t, a)

	// 2. An ask, approved: the result reaches the agent.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__delete_note", Arguments: map[string]any{"id": "note-3"}})
	if err != nil || res.IsError {
		t.Fatalf("approved call: %v %s", err, resultText(res))
	}
	p := <-a.Seen
	if p.Request.Client != "test-agent" || p.Request.Context != gateway.AgentContext(gateway.DefaultTokenName) {
		t.Errorf("pending shows client %q context %q", p.Request.Client, p.Request.Context)
	}

	// 3. An ask, denied: a tool result with isError and a clear sentence.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__delete_note", Arguments: map[string]any{"id": "note-2"}})
	<-a.Seen
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "denied") || !strings.Contains(resultText(res), "not today") {
		t.Fatalf("denied call: %v %+v %q", err, res, resultText(res))
	}

	// 4. An ask nobody answers: denied after approval_timeout.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__delete_note", Arguments: map[string]any{"id": "note-1"}})
	<-a.Seen
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "nobody answered") {
		t.Fatalf("unanswered call: %v %q", err, resultText(res))
	}
}

// An agent that cancels withdraws its pending approval, and an
// agent that asked for progress hears that its call waits for a person.
func TestGatewayCancelWithdrawsAndProgressInforms(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	a := sessiontest.AnswerWith(t, m) // sees, never answers
	g := startGateway(t, m)
	var progress atomic.Int32
	cs := agent(t, g, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		if strings.Contains(req.Params.Message, "waiting for a person") {
			progress.Add(1)
		}
	}})
	cancelWhileWaiting(t, a, "a waiting progress notification", func() bool { return progress.Load() > 0 }, func(ctx context.Context) error {
		return sendWithProgress(ctx, cs.CallTool, &mcp.CallToolParams{Name: "notes__delete_note", Arguments: map[string]any{"id": "note-1"}}, "tok-1")
	})
	sessiontest.WaitFor(t, "the approval to be withdrawn", 5*time.Second, func() bool { return len(m.Engine().Pending()) == 0 })
}

func TestGatewaySecurity(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	g := startGateway(t, m)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	port := g.URL()[len("http://127.0.0.1:"):strings.LastIndex(g.URL(), "/")]
	post := func(host, origin, auth string, body []byte, chunked bool) int {
		t.Helper()
		req, _ := http.NewRequest("POST", g.URL(), bytes.NewReader(body))
		if chunked {
			req, _ = http.NewRequest("POST", g.URL(), struct{ *bytes.Reader }{bytes.NewReader(body)})
		}
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	good := "127.0.0.1:" + port
	bearer := "Bearer " + testToken
	cases := []struct {
		name               string
		host, origin, auth string
		body               []byte
		chunked            bool
		want               int
	}{
		{"ok", good, "", bearer, []byte(init), false, 200},
		{"localhost name ok", "localhost:" + port, "http://localhost:" + port, bearer, []byte(init), false, 200},
		{"missing token", good, "", "", []byte(init), false, 401},
		{"wrong token", good, "", "Bearer " + strings.Repeat("0", len(testToken)), []byte(init), false, 401},
		{"malformed token", good, "", "Basic " + testToken, []byte(init), false, 401},
		{"token prefix only", good, "", "Bearer " + testToken[:10], []byte(init), false, 401},
		{"host evil.example.com", "evil.example.com", "", bearer, []byte(init), false, 403},
		{"host localhost.evil.com", "localhost.evil.com:" + port, "", bearer, []byte(init), false, 403},
		{"host 127.0.0.1.evil.com", "127.0.0.1.evil.com:" + port, "", bearer, []byte(init), false, 403},
		{"origin evil.example.com", good, "http://evil.example.com", bearer, []byte(init), false, 403},
		{"origin localhost.evil.com", good, "http://localhost.evil.com:" + port, bearer, []byte(init), false, 403},
		{"origin 127.0.0.1.evil.com", good, "http://127.0.0.1.evil.com", bearer, []byte(init), false, 403},
		{"origin null", good, "null", bearer, []byte(init), false, 403},
		{"body over the limit", good, "", bearer, bytes.Repeat([]byte(" "), int(g.MaxBody())+1), false, 413},
		{"chunked body over the limit", good, "", bearer, bytes.Repeat([]byte(" "), int(g.MaxBody())+1), true, 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := post(c.host, c.origin, c.auth, c.body, c.chunked); got != c.want {
				t.Errorf("status %d, want %d", got, c.want)
			}
		})
	}
	if _, err := gateway.New(m, gateway.Options{Listen: "0.0.0.0:0", Token: testToken}); err == nil {
		t.Error("a non-loopback listen address was accepted without allow_remote")
	}
}

// The agent's Authorization header never reaches an upstream server.
func TestGatewayDoesNotForwardAgentCredentials(t *testing.T) {
	var seen atomic.Value
	docs, _ := demo.New("docs")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return docs }, nil)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			seen.Store(r.Header.Get("Authorization"))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close)
	cfg := sessiontest.NewConfig(config.Server{Name: "docs", Transport: config.TransportHTTP, URL: upstream.URL, Trust: trust.Trusted,
		Headers: map[string]string{"Authorization": "Bearer upstream-secret"}, ConnectTimeout: 10 * time.Second})
	m := sessiontest.Start(t, cfg, session.Options{})
	g := startGateway(t, m)
	cs := agent(t, g, nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "docs__search_docs", Arguments: map[string]any{"query": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v (skipped: %q, tools: %d)", err, g.Skipped(), len(m.Snapshot().Tools))
	}
	sessiontest.MustServer(t, m, "docs", model.StatusReady)
	if got := seen.Load(); got != "Bearer upstream-secret" {
		t.Errorf("upstream saw %q, want only its own configured header", got)
	}
}

// The upstream set changing (a rug pull blocks a tool) reaches the agent as
// tools/list_changed, and the blocked tool is no longer offered.
func TestGatewayListChanged(t *testing.T) {
	m, set := sessiontest.DemoInProcess(t, session.Options{})
	g := startGateway(t, m)
	changed := make(chan struct{}, 8)
	cs := agent(t, g, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	set.Notes().RugPull()
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed after the rug pull")
	}
	sessiontest.WaitFor(t, "notes__create_note to be withdrawn from the agent", 10*time.Second, func() bool {
		listed, ok := listsTool(cs, "notes__create_note")
		return ok && !listed
	})
	if ti := sessiontest.MustTool(t, m, "notes", "create_note"); ti.Class.Tier != trust.TierBlocked || ti.Pin != trust.PinChanged {
		t.Errorf("rug-pulled tool: tier %v pin %v", ti.Class.Tier, ti.Pin)
	}
}

func TestGatewayTokenPersists(t *testing.T) {
	dir := t.TempDir()
	a, err := gateway.LoadOrCreateToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := gateway.LoadOrCreateToken(dir)
	if err != nil || a != b || len(a) != 64 {
		t.Errorf("tokens %q %q %v", a, b, err)
	}
}

// The annotations an agent sees are coherent with the tier airlock gives the
// tool. A read-only tool is served with destructiveHint false (the spec's default true
// for an absent destructiveHint means nothing once a tool is read-only, and an agent
// that reads both hints must not see a tool that is at once read-only and destructive);
// a write tool is neither read-only nor destructive; a destructive tool is destructive.
func TestGatewayAnnotations_CoherentWithTier(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	g := startGateway(t, m)
	cs := agent(t, g, nil)
	served := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		served[tool.Name] = tool
	}
	tiers := map[trust.Tier]int{}
	for _, ti := range m.Snapshot().Tools {
		tool := served[ti.Ref.Qualified()]
		if tool == nil {
			continue
		}
		tiers[ti.Class.Tier]++
		an := tool.Annotations
		if an == nil || an.DestructiveHint == nil || an.OpenWorldHint == nil {
			t.Errorf("%s: annotations %+v, want every hint stated", tool.Name, an)
			continue
		}
		wantRO := ti.Class.Tier == trust.TierRead
		wantDestructive := ti.Class.Tier == trust.TierDestructive
		if an.ReadOnlyHint != wantRO || *an.DestructiveHint != wantDestructive {
			t.Errorf("%s (tier %v): served readOnlyHint %v destructiveHint %v, want %v %v",
				tool.Name, ti.Class.Tier, an.ReadOnlyHint, *an.DestructiveHint, wantRO, wantDestructive)
		}
		if wantRO && !an.IdempotentHint {
			t.Errorf("%s (tier read): served idempotentHint false; a read has no effect to repeat", tool.Name)
		}
		if *an.OpenWorldHint != ti.Class.Effective.OpenWorld {
			t.Errorf("%s: served openWorldHint %v, want the effective %v", tool.Name, *an.OpenWorldHint, ti.Class.Effective.OpenWorld)
		}
	}
	if tiers[trust.TierRead] == 0 || tiers[trust.TierDestructive] == 0 {
		t.Fatalf("the demo served tiers %v; the test needs read and destructive tools", tiers)
	}
}
