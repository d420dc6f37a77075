package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/gateway"
)

func startGatewayWith(t *testing.T, m *session.Manager, opts gateway.Options) *gateway.Gateway {
	t.Helper()
	opts.Listen, opts.Token = "127.0.0.1:0", testToken
	g, err := gateway.New(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// closedWithin reports whether the server closes conn within d (a read returns EOF or
// a reset rather than timing out on our side).
func closedWithin(conn net.Conn, d time.Duration) bool {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	r := bufio.NewReader(conn)
	for {
		if _, err := r.ReadByte(); err != nil {
			ne, ok := err.(net.Error)
			return !(ok && ne.Timeout())
		}
	}
}

// TestGateway_ReadHeaderAndIdleTimeouts: a client that never finishes its request
// headers, or keeps a connection idle, is cut off.
func TestGateway_ReadHeaderAndIdleTimeouts(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	g := startGatewayWith(t, m, gateway.Options{ReadHeaderTimeout: 200 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	addr := strings.TrimSuffix(strings.TrimPrefix(g.URL(), "http://"), "/mcp")

	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	_, _ = slow.Write([]byte("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"))
	if !closedWithin(slow, 3*time.Second) {
		t.Error("a request whose headers never end kept its connection")
	}

	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	// Authenticated: a refused request's connection is closed at once, not kept alive.
	_, _ = idle.Write([]byte("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + testToken + "\r\n\r\n"))
	br := bufio.NewReader(idle)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	start := time.Now()
	_ = idle.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := br.ReadByte(); err == nil || isTimeout(err) {
		t.Errorf("an idle keep-alive connection stayed open: %v", err)
	} else if time.Since(start) < 200*time.Millisecond {
		t.Errorf("closed after %v, before the idle timeout", time.Since(start))
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestGateway_WriteTimeoutSparesLongApprovalWait: the write timeout bounds each write,
// not a response: an agent call that waits for a person far longer than the write
// timeout, with its event stream open, still gets its result.
func TestGateway_WriteTimeoutSparesLongApprovalWait(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	g := startGatewayWith(t, m, gateway.Options{WriteTimeout: 200 * time.Millisecond, WaitingEvery: time.Hour})
	cs := agent(t, g, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	onEvents(ctx, m, func(ev model.Event) {
		if req, ok := ev.(model.ApprovalRequested); ok {
			time.Sleep(1200 * time.Millisecond) // six write timeouts
			_ = m.Engine().Answer(req.Pending.ID, model.Response{Answer: model.AllowOnce})
		}
	})
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__delete_note", Arguments: map[string]any{"id": "note-3"}})
	if err != nil || res.IsError {
		t.Fatalf("a call approved after %v failed: %v %s", time.Since(start), err, resultText(res))
	}
	if time.Since(start) < time.Second {
		t.Fatalf("the call did not wait for the approval (%v)", time.Since(start))
	}
	// The session still works afterwards: its standalone stream was not cut either.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docs__search_docs", Arguments: map[string]any{"query": "tier"}}); err != nil {
		t.Fatalf("a later call: %v", err)
	}
}

// An agent that initializes and then vanishes without ending its
// session (it crashed, or its machine slept) leaves the session, go-sdk's goroutines
// and buffers for it and airlock's watcher, for as long as airlock runs: every such
// agent adds to them. With SessionIdleTimeout set, an idle session ends.
func TestGateway_VanishedAgentSessionsEnd(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	// Long enough that no session ends before all 20 are counted on a loaded machine
	// (at 300 ms the first ones ended while the last initialized: "50 goroutines with
	// 20 sessions open, 31 before").
	g := startGatewayWith(t, m, gateway.Options{SessionIdleTimeout: 3 * time.Second})
	settle := func() int {
		time.Sleep(100 * time.Millisecond)
		return runtime.NumGoroutine()
	}
	before := settle()
	const agents = 20
	for i := range agents {
		initializeAndVanish(t, g, fmt.Sprintf("gone-%d", i))
	}
	if during := runtime.NumGoroutine(); during < before+agents {
		t.Fatalf("%d goroutines with %d sessions open, %d before: the test does not see sessions", during, agents, before)
	}
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(15 * time.Second)
	for {
		n := settle()
		if n <= before+2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines 15 s after %d agents vanished, %d before: their sessions never end", n, agents, before)
		}
	}
}

// The other half: ending idle sessions must not end an agent that is
// only idle. A go-sdk agent keeps its event stream (GET) open while it thinks; with
// SessionIdleTimeout it keeps its session however long it waits, and a call after
// the wait works. The same timeout ends the session of an agent that vanished (no
// request, no stream).
func TestGateway_IdleAgentWithOpenStreamKeepsItsSession(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	const idle = 300 * time.Millisecond
	g := startGatewayWith(t, m, gateway.Options{SessionIdleTimeout: idle})
	ctx := context.Background()
	cs, err := dialGateway(t, g, testToken, "thinker", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func() error {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docs__search_docs", Arguments: map[string]any{"query": "tier"}})
		return err
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}

	// A second agent initializes and vanishes: no stream, no request.
	gone := initializeAndVanish(t, g, "gone")

	time.Sleep(6 * idle) // the thinker thinks
	if err := call(); err != nil {
		t.Fatalf("a call after %v idle with the event stream open: %v (its session was ended)", 6*idle, err)
	}
	// The vanished agent, asking again, is told its session is gone (as the MCP
	// specification has a client then start a new one).
	resp := postRaw(t, g, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, map[string]string{"Mcp-Session-Id": gone, "Mcp-Protocol-Version": "2025-11-25"})
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a request of the vanished agent's session %s after %v: %s, want 404 (its session still open)", gone, 6*idle, resp.Status)
	}
	if n := g.OpenSessions(); n != 1 {
		t.Fatalf("%d sessions open, want the thinker's alone", n)
	}
}

// initializeAndVanish opens an agent session over raw HTTP (initialize only: no event
// stream, no notification) and returns its id, as an agent that then vanished would.
func initializeAndVanish(t *testing.T, g *gateway.Gateway, name string) string {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":%q,"version":"1"}}}`, name)
	resp := postRaw(t, g, body, nil)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, id)
	}
	return id
}
