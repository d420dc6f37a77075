package gateway_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/session/pins"
	"github.com/airlock-mcp/airlock/trust"
)

// typeScriptAgent is the command that runs the TypeScript SDK's agent
// (bench/agent/agent.mjs, on the SDK pinned in testdata/npm) against g with the
// default token and then args. Without node or the SDK the test is skipped, or fails
// in CI.
func typeScriptAgent(t *testing.T, g *gateway.Gateway, args ...string) *exec.Cmd {
	t.Helper()
	node, err := exec.LookPath("node")
	root := sessiontest.RepoRoot(t)
	sdk := filepath.Join(root, "testdata", "npm", "node_modules", "@modelcontextprotocol", "sdk")
	if _, serr := os.Stat(sdk); err != nil || serr != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node or the pinned TypeScript SDK is not installed")
		}
		t.Skip("node or the pinned TypeScript SDK is not installed")
	}
	return exec.Command(node, append([]string{filepath.Join(root, "bench", "agent", "agent.mjs"), "-url", g.URL(), "-token", testToken, "-sdk", sdk}, args...)...)
}

// dialGateway connects a go-sdk client named client to g with the bearer token tok
// and the client options opts (nil for none). Closing the session is the caller's.
func dialGateway(tb testing.TB, g *gateway.Gateway, tok, client string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	tb.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, opts)
	return c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   g.URL(),
		HTTPClient: &http.Client{Transport: sessiontest.HeaderRT{Headers: map[string]string{"Authorization": "Bearer " + tok}}},
	}, nil)
}

// onEvents runs f on every event of m, in a goroutine of its own, until ctx ends.
// It consumes m's events: nothing else may read them.
func onEvents(ctx context.Context, m *session.Manager, f func(model.Event)) {
	go func() {
		for {
			ev, ok := m.Next(ctx)
			if !ok {
				return
			}
			f(ev)
		}
	}()
}

// progressParams is the params of a request an agent can send a progress token with.
type progressParams interface {
	SetProgressToken(any)
}

// sendWithProgress sets the progress token token on p, sends p with send and
// returns the error (the result is not wanted).
func sendWithProgress[P progressParams, R any](ctx context.Context, send func(context.Context, P) (R, error), p P, token string) error {
	p.SetProgressToken(token)
	_, err := send(ctx, p)
	return err
}

// postRaw sends body to g over plain HTTP with testToken and the headers a
// streamable HTTP client sends, and the extra headers given; it reads the body away
// and returns the response.
func postRaw(t *testing.T, g *gateway.Gateway, body string, extra map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", g.URL(), strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// listsTool reports whether the gateway lists the tool name to cs; ok is false when
// the listing failed.
func listsTool(cs *mcp.ClientSession, name string) (listed, ok bool) {
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		return false, false
	}
	for _, tool := range res.Tools {
		if tool.Name == name {
			return true, true
		}
	}
	return false, true
}

// onBeta is a startRelay config change that applies f to the beta server.
func onBeta(f func(*config.Server)) func(*config.Config) {
	return func(c *config.Config) {
		for i := range c.Servers {
			if c.Servers[i].Name == "beta" {
				f(&c.Servers[i])
			}
		}
	}
}

// betaResourcesAsk is a startRelay config change: reading beta's resources asks.
var betaResourcesAsk = onBeta(func(s *config.Server) { s.Resources = trust.Ask })

// cancelWhileWaiting sends a request with send, waits for the person to see its
// question (on a) and for told to hold (what says what it waits for), then cancels
// the request and waits for it to return.
func cancelWhileWaiting(t *testing.T, a *sessiontest.Answerer, what string, told func() bool, send func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- send(ctx) }()
	<-a.Seen
	sessiontest.WaitFor(t, what, 5*time.Second, told)
	cancel()
	<-errc
}

// collected is a list of strings a notification handler adds to while the test
// reads it.
type collected struct {
	mu sync.Mutex
	xs []string
}

func (c *collected) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.xs = append(c.xs, s)
}

// all is a copy of what was added so far.
func (c *collected) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.xs...)
}

// pinnedThenChanged pins the benign weather tool of a trusted raw server wx (with
// before applied to its config), then has it serve the malicious one (with change
// applied) and starts a Manager over the same pins file, in which the tool must be
// blocked as changed. It returns that Manager and its pins.
func pinnedThenChanged(t *testing.T, before, change func(*config.Server)) (*session.Manager, *pins.Store) {
	t.Helper()
	pinsPath := filepath.Join(t.TempDir(), "pins.json")
	path := sessiontest.ScriptFile(t, sessiontest.Script(sessiontest.Page(sessiontest.BenignWeather)))
	cfg := sessiontest.NewConfig(sessiontest.RawServerAt(t, "wx", trust.Trusted, path))
	if before != nil {
		before(&cfg.Servers[0])
	}
	start := func() (*session.Manager, *pins.Store) {
		t.Helper()
		store, err := pins.Open(pinsPath)
		if err != nil {
			t.Fatal(err)
		}
		return sessiontest.Start(t, cfg, session.Options{Pins: store}), store
	}
	m, _ := start()
	sessiontest.WantTier(t, m, "wx", "get_weather", trust.TierRead)
	m.Close()

	sessiontest.WriteScript(t, path, sessiontest.Script(sessiontest.Page(sessiontest.MaliciousWeather)))
	change(&cfg.Servers[0])
	m2, pins2 := start()
	sessiontest.WantBlockedChanged(t, m2, "wx", "get_weather")
	return m2, pins2
}

// exfilHazard is m's open-world-exfiltration hazard; the test fails without one.
func exfilHazard(t *testing.T, m *session.Manager) trust.Hazard {
	t.Helper()
	for _, h := range m.Snapshot().Hazards {
		if h.Kind == trust.HazardOpenWorldExfiltration {
			return h
		}
	}
	t.Fatal("no open-world-exfiltration hazard")
	return trust.Hazard{}
}

// wantRevokedDecision checks that the last decision the audit log at path holds for
// the context token:ci-bot was made by agent-gone because the token was revoked.
func wantRevokedDecision(t *testing.T, path string) {
	t.Helper()
	var rec *audit.Record
	for _, r := range sessiontest.AuditRecords(t, path) {
		if r.Kind == "decision" && r.Context == "token:ci-bot" {
			rec = &r
		}
	}
	if rec == nil || rec.DecidedBy != string(trust.DecidedByAgentGone) || !strings.Contains(rec.Reason, "token was revoked") {
		t.Errorf("decision record %+v, want agent-gone saying the token was revoked", rec)
	}
}

// answerInBackground answers the n-th (from 1) question of evs with r, from a
// goroutine of its own, and reports a refused answer as an error of the test.
func answerInBackground(t *testing.T, m *session.Manager, evs *sessiontest.EventLog, n int, r model.Response) {
	go func() {
		p := evs.Pending(t, n)
		if err := m.Engine().Answer(p.ID, r); err != nil {
			t.Error(err)
		}
	}()
}

// ciBot is tokenSetup with a gateway and an agent connected with the named token
// ci-bot.
type ciBot struct {
	mail  *sessiontest.Upstream
	m     *session.Manager
	evs   *sessiontest.EventLog
	audit string // the audit log's path
	g     *gateway.Gateway
	dir   string // the gateway's state dir
	tok   string // ci-bot's token
	a     *mcp.ClientSession
}

// ciBotSetup starts a ciBot whose agent calls itself client.
func ciBotSetup(t *testing.T, client string) ciBot {
	t.Helper()
	var f ciBot
	f.mail, f.m, f.evs, f.audit = tokenSetup(t)
	f.g = startGateway(t, f.m)
	f.dir = gatewayStateDir(t, f.g)
	f.tok = namedToken(t, f.g, "ci-bot")
	f.a = mustAgentWithToken(t, f.g, f.tok, client)
	return f
}

// mustAgentWithToken is agentWithToken failing the test when it cannot connect.
func mustAgentWithToken(t *testing.T, g *gateway.Gateway, tok, client string) *mcp.ClientSession {
	t.Helper()
	cs, err := agentWithToken(t, g, tok, client)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// chatServer is an upstream chat server whose one tool, post, is a write.
func chatServer() *sessiontest.Upstream {
	chat := sessiontest.NewUpstream("chat")
	chat.Add("post", "Post a message.", sessiontest.WriteHints())
	return chat
}

// wantNothingAskedOrSent checks that evs holds no question and that chat's post never
// ran: refused arguments are refused before anyone is asked.
func wantNothingAskedOrSent(t *testing.T, evs *sessiontest.EventLog, chat *sessiontest.Upstream) {
	t.Helper()
	if n := evs.Count(sessiontest.IsApproval); n != 0 {
		t.Errorf("%d questions were asked for refused arguments", n)
	}
	if got := chat.Calls("post"); len(got) != 0 {
		t.Errorf("upstream received %s", got)
	}
}
