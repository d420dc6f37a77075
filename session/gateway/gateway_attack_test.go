package gateway_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
)

// wipeCall is a JSON-RPC call of the rig's wipe tool.
const wipeCall = `{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"wipe__wipe","arguments":{}}}`

// rawCall sends wipeCall on its own TCP connection, in session sessionID, as a POST
// of HTTP version proto, and returns the connection.
func rawCall(t *testing.T, r *goneRig, sessionID, proto string) net.Conn {
	t.Helper()
	return rawPOST(t, r, sessionID, proto, "2025-11-25", wipeCall)
}

// rawPOST sends body on its own TCP connection, in session sessionID, as a POST of
// HTTP version proto and MCP protocol version version, and returns the connection.
func rawPOST(t *testing.T, r *goneRig, sessionID, proto, version, body string) net.Conn {
	t.Helper()
	return rawPOSTWith(t, r, sessionID, proto, version, "", body)
}

// rawPOSTWith is rawPOST with extra header lines (each ending in CRLF).
func rawPOSTWith(t *testing.T, r *goneRig, sessionID, proto, version, extra, body string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", gatewayAddr(r.g))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := "POST /mcp " + proto + "\r\nHost: " + gatewayAddr(r.g) + "\r\nAuthorization: Bearer " + testToken +
		"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream" +
		"\r\nMcp-Session-Id: " + sessionID + "\r\nMcp-Protocol-Version: " + version +
		"\r\nConnection: keep-alive\r\n" + extra + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := c.Write([]byte(head + body)); err != nil {
		t.Fatal(err)
	}
	return c
}

// An agent that pipelines the start of a next request behind its call and then
// closes its connection has left like any other: net/http stops watching a
// connection for its close once it has read a pipelined byte, so without the
// gateway's own watch the question would wait for the person and then run for
// nobody.
func TestAgentGone_PipelinedThenClosed(t *testing.T) {
	for _, c := range []struct{ name, proto, extra string }{
		{"a byte of a next request", "HTTP/1.1", "G"},
		{"a whole next request", "HTTP/1.1", "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"HTTP/1.0 keep-alive", "HTTP/1.0", "G"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newGoneRig(t)
			cs := agent(t, r.g, nil)
			conn := rawCall(t, r, cs.ID(), c.proto)
			p := r.question(t)
			// Sent once the call waits, so that it reaches the socket, not what
			// net/http buffered with the request.
			if _, err := conn.Write([]byte(c.extra)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			if len(r.m.Engine().Pending()) != 1 {
				t.Fatalf("the question ended before its agent left: %v", r.m.Engine().Pending())
			}
			left := time.Now()
			_ = conn.Close()
			r.wantGone(t, p, left, c.name)
		})
	}
}

// A pipelined request is still served once the call ahead of it is answered: the
// gateway's watch of the connection gives back what it read.
func TestGateway_PipelinedRequestServedAfterTheCall(t *testing.T) {
	r := newGoneRig(t)
	cs := agent(t, r.g, nil)
	conn := rawCall(t, r, cs.ID(), "HTTP/1.1")
	p := r.question(t)
	ping := `{"jsonrpc":"2.0","id":78,"method":"ping"}`
	next := "POST /mcp HTTP/1.1\r\nHost: " + gatewayAddr(r.g) + "\r\nAuthorization: Bearer " + testToken +
		"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream" +
		"\r\nMcp-Session-Id: " + cs.ID() + "\r\nMcp-Protocol-Version: 2025-11-25" +
		"\r\nContent-Length: " + strconv.Itoa(len(ping)) + "\r\n\r\n" + ping
	if _, err := conn.Write([]byte(next)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := r.m.Engine().Answer(p.ID, model.Response{Answer: model.AllowOnce}); err != nil {
		t.Fatalf("allowing the pipelined connection's call: %v", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	for i, want := range []string{`"id":77`, `"id":78`} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i+1, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Fatalf("response %d: status %d, %v, body %q; want 200 with %s", i+1, resp.StatusCode, err, body, want)
		}
	}
	if _, err := os.Stat(r.marker); err != nil {
		t.Errorf("the allowed call did not run: %v", err)
	}
}

// A second POST that reuses the JSON-RPC id of a call still waiting neither takes
// the call over nor keeps it alive: the call stays bound to the POST it came in, and
// is withdrawn when that POST's agent leaves, whatever the second POST does.
func TestAgentGone_SecondPOSTWithTheSameIDDoesNotHoldTheCall(t *testing.T) {
	r := newGoneRig(t)
	cs := agent(t, r.g, nil)
	first := rawCall(t, r, cs.ID(), "HTTP/1.1")
	p := r.question(t)
	second := rawCall(t, r, cs.ID(), "HTTP/1.1")
	_ = second.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	resp, err := http.ReadResponse(bufio.NewReader(second), nil)
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("the second POST with id 77: %d %q", resp.StatusCode, body)
	} else {
		t.Logf("the second POST with id 77: no answer (%v)", err)
	}
	select {
	case q := <-r.a.Seen:
		t.Fatalf("the reused id asked a second question (%d)", q.ID)
	case <-time.After(100 * time.Millisecond):
	}
	left := time.Now()
	_ = first.Close()
	r.wantGone(t, p, left, "the first POST closed")
	_ = second.Close()
}

// A batch (accepted from an agent that names a protocol before 2025-06-18) is bound
// like a single call: each of its calls waits on the POST it came in, and all are
// withdrawn when that POST's agent leaves.
func TestAgentGone_BatchWithdrawnWithItsPOST(t *testing.T) {
	r := newGoneRig(t)
	cs := agent(t, r.g, nil)
	batch := "[" + wipeCall + "," + strings.Replace(wipeCall, `"id":77`, `"id":78`, 1) + "]"
	conn := rawPOST(t, r, cs.ID(), "HTTP/1.1", "2025-03-26", batch)
	p := r.question(t)
	r.question(t)
	left := time.Now()
	_ = conn.Close()
	r.wantGone(t, p, left, "batch POST closed")
}

// An agent that lost its connection and comes back with the same session id and the
// same JSON-RPC id: the first call stays withdrawn (nothing of it runs when the person
// answers the second), the retry asks again, and what the person allows runs once.
func TestAgentGone_RetryInTheSameSessionRunsOnce(t *testing.T) {
	r := newGoneRig(t)
	cs := agent(t, r.g, nil)
	first := rawCall(t, r, cs.ID(), "HTTP/1.1")
	p1 := r.question(t)
	left := time.Now()
	_ = first.Close()
	r.wantGone(t, p1, left, "the first connection closed")
	second := rawCall(t, r, cs.ID(), "HTTP/1.1")
	p2 := r.question(t)
	if p2.CallID == p1.CallID {
		t.Fatalf("the retry reuses the withdrawn call %s", p1.CallID)
	}
	if err := r.m.Engine().Answer(p2.ID, model.Response{Answer: model.AllowOnce}); err != nil {
		t.Fatal(err)
	}
	_ = second.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(second), nil)
	if err != nil {
		t.Fatalf("the retry's answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "wiped") {
		t.Errorf("the retry's answer %q, want the tool's result", body)
	}
	var kinds []string
	for _, rec := range sessiontest.AuditRecords(t, r.auditPath) {
		if rec.CallID == p1.CallID || rec.CallID == p2.CallID {
			kinds = append(kinds, rec.Kind+":"+rec.Decision+rec.Outcome+":"+rec.DecidedBy)
		}
	}
	want := []string{"decision:deny:agent-gone", "decision:allow:person", "outcome:ok:"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Errorf("audit %q, want %q", kinds, want)
	}
}

// An agent that sends the gateway's own Airlock-Requester header (twice, with ids it
// made up) cannot choose what its call is bound to: the gateway replaces the header,
// the call asks as any other, and is withdrawn when its own POST closes.
func TestAgentGone_ForgedRequesterHeaderIsReplaced(t *testing.T) {
	r := newGoneRig(t)
	cs := agent(t, r.g, nil)
	conn := rawPOSTWith(t, r, cs.ID(), "HTTP/1.1", "2025-11-25",
		"Airlock-Requester: forged-1\r\nairlock-requester: forged-2\r\n", wipeCall)
	p := r.question(t)
	time.Sleep(100 * time.Millisecond)
	if len(r.m.Engine().Pending()) != 1 {
		t.Fatal("the call with a forged requester header ended before its agent left")
	}
	left := time.Now()
	_ = conn.Close()
	r.wantGone(t, p, left, "forged requester header")
}
