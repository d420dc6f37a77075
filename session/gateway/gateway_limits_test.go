package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/gateway"
)

func gatewayAddr(g *gateway.Gateway) string {
	return strings.TrimSuffix(strings.TrimPrefix(g.URL(), "http://"), "/mcp")
}

// statusWithin sends head on a new connection and returns the status code the
// gateway answers with within d (0 when it does not answer in time).
func statusWithin(t *testing.T, addr, head string, d time.Duration) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A request without the token, with a wrong token, for a wrong Host, or from a
// foreign Origin is answered from its headers: its body (announced, never sent) is
// not waited for.
func TestGateway_RefusesFromHeadersWithoutReadingTheBody(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	g := startGateway(t, m)
	addr := gatewayAddr(g)
	const body = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 5000\r\n\r\n{"
	for _, c := range []struct {
		name, head string
		want       int
	}{
		{"no token", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + body, http.StatusUnauthorized},
		{"wrong token", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer nope\r\n" + body, http.StatusUnauthorized},
		{"wrong host", "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer " + testToken + "\r\n" + body, http.StatusForbidden},
		{"foreign origin", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://evil.example\r\n" + body, http.StatusForbidden},
		{"no token, chunked", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n{", http.StatusUnauthorized},
		// The 100 Continue is never sent: the client is told no at once.
		{"no token, 100-continue", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n" + body, http.StatusUnauthorized},
	} {
		start := time.Now()
		got := statusWithin(t, addr, c.head, 3*time.Second)
		t.Logf("%s: %d after %v", c.name, got, time.Since(start).Round(time.Microsecond))
		if got != c.want {
			t.Errorf("%s: status %d within 3 s, want %d at once (without waiting for the 5,000-byte body)", c.name, got, c.want)
		}
	}
}

// Headers beyond 64 KiB are refused (431) rather than held.
func TestGateway_HeadersBounded(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	g := startGateway(t, m)
	big := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + strings.Repeat("a", 100<<10) + "\r\n\r\n"
	if got := statusWithin(t, gatewayAddr(g), big, 3*time.Second); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("100 KiB of headers: status %d, want 431", got)
	}
}

// An authenticated request whose body trickles is cut off at the body deadline.
func TestGateway_BodyReadDeadline(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	g := startGatewayWith(t, m, gateway.Options{BodyReadTimeout: 300 * time.Millisecond})
	head := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + testToken +
		"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
	for _, c := range []struct{ name, head, byte string }{
		{"Content-Length", head + "Content-Length: 5000\r\n\r\n{", " "},
		// No length: the chunked reader's reads have the deadline too, small chunks
		// as large ones.
		{"chunked", head + "Transfer-Encoding: chunked\r\n\r\n1\r\n{\r\n", "1\r\n \r\n"},
		{"chunked after 100-continue", head + "Expect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n", "1\r\n \r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", gatewayAddr(g))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_, _ = conn.Write([]byte(c.head))
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
						if _, err := conn.Write([]byte(c.byte)); err != nil {
							return
						}
					}
				}
			}()
			start := time.Now()
			if !closedWithin(conn, 3*time.Second) {
				t.Fatalf("a body trickling a byte every 100 ms was still read %v later (the body deadline is 300 ms)", time.Since(start).Round(time.Millisecond))
			}
			t.Logf("trickling body cut off after %v", time.Since(start).Round(time.Millisecond))
		})
	}
}

// serverConns counts the gateway's side of the TCP connections to port that this
// process holds: sockets in /proc/self/fd whose local port is the gateway's.
func serverConns(t *testing.T, port int) (server, fds int) {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	inodes := map[string]bool{}
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 10 || fs[3] == "0A" || !inodes[fs[9]] {
				continue
			}
			i := strings.LastIndexByte(fs[1], ':')
			if p, err := strconv.ParseUint(fs[1][i+1:], 16, 32); err == nil && int(p) == port {
				server++
			}
		}
	}
	return server, len(ents)
}

// 5,000 slow clients without a token (half send headers announcing a body and then
// trickle it, half trickle their headers) neither exhaust descriptors nor lock out a
// real agent: the gateway holds no more connections than its bound, and a go-sdk
// agent connects and gets its call answered.
func TestGateway_SlowClientsDoNotLockOutAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("5,000 connections")
	}
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	const perClient = 1000
	var logMu sync.Mutex
	var logged []string
	g := startGatewayWith(t, m, gateway.Options{MaxConnsPerClient: perClient, Log: func(s string) {
		logMu.Lock()
		logged = append(logged, s)
		logMu.Unlock()
	}})
	addr := gatewayAddr(g)
	_, portS, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portS)
	_, before := serverConns(t, port)

	const slow = 5000
	// Few goroutines on the clients' side (the race detector allows 8,128 in all):
	// 16 dialers, then one goroutine trickles a byte to every connection each second.
	var mu sync.Mutex
	var conns []net.Conn
	var answered401 int
	var wg sync.WaitGroup
	const dialers = 16
	for w := range dialers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < slow; i += dialers {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					continue
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
				head := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"
				if i%2 == 1 {
					head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" // headers that never end
				}
				if _, err := c.Write([]byte(head)); err != nil || i%2 == 1 {
					continue
				}
				_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
				if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil && resp.StatusCode == http.StatusUnauthorized {
					mu.Lock()
					answered401++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	stop := make(chan struct{})
	trickled := make(chan struct{})
	go func() {
		defer close(trickled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
			}
			mu.Lock()
			for _, c := range conns {
				_ = c.SetWriteDeadline(time.Now().Add(time.Millisecond))
				_, _ = c.Write([]byte("x"))
			}
			mu.Unlock()
		}
	}()
	defer func() {
		close(stop)
		<-trickled
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	time.Sleep(1500 * time.Millisecond) // a round of trickling

	start := time.Now()
	client := mcp.NewClient(&mcp.Implementation{Name: "real-agent", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   g.URL(),
		HTTPClient: &http.Client{Transport: sessiontest.HeaderRT{Headers: map[string]string{"Authorization": "Bearer " + testToken}}},
	}, nil)
	if err != nil {
		t.Fatalf("a real agent could not connect with %d slow clients on the gateway: %v", slow, err)
	}
	defer cs.Close()
	connected := time.Since(start)
	callStart := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docs__search_docs", Arguments: map[string]any{"query": "tier"}})
	if err != nil || res.IsError {
		t.Fatalf("a real agent's call with %d slow clients on the gateway: %v %s", slow, err, sessiontest.TextOf(res))
	}
	called := time.Since(callStart)

	server, fds := serverConns(t, port)
	mu.Lock()
	dialed, got401 := len(conns), answered401
	mu.Unlock()
	t.Logf("%d slow clients dialed, %d answered 401 at once; the gateway holds %d connections (bound %d per client); %d fds in the test process (%d before); agent connected in %v, its call answered in %v; %d goroutines",
		dialed, got401, server, perClient, fds, before, connected.Round(time.Millisecond), called.Round(time.Millisecond), runtime.NumGoroutine())
	if server > perClient+20 {
		t.Errorf("the gateway holds %d connections from one client, bound %d", server, perClient)
	}
	if got401 < slow/2*9/10 {
		t.Errorf("only %d of %d clients that sent headers without a token were answered 401 within 2 s", got401, slow/2)
	}
	if s := fmt.Sprint(called); called > 5*time.Second {
		t.Errorf("the agent's call took %s", s)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if len(logged) == 0 || !strings.Contains(logged[0], "the limit per client is 1000") {
		t.Errorf("log %q, want a line naming the per-client limit", logged)
	} else {
		t.Logf("log: %s", logged[0])
	}
}
