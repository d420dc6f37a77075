package gateway

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestWriteDeadlines_CutAClientThatStopsReading: a client that sends a request and
// never reads the answer ties the handler up only until one write times out.
func TestWriteDeadlines_CutAClientThatStopsReading(t *testing.T) {
	done := make(chan error, 1)
	srv := httptest.NewServer(writeDeadlines(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for range 1024 { // 1 GiB: far more than the socket buffers hold
			if _, err := w.Write(chunk); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}), 200*time.Millisecond))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the handler wrote 1 GiB to a client that reads nothing")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write to a client that stopped reading never timed out")
	}
}

// sessionLife: a request in flight (a waiting call, an open event stream) keeps its
// session however long it lasts; a session with nothing in flight for the timeout is
// closed once; ids that are no session (an agent may send any) are forgotten.
func TestSessionLife_InFlightKeepsIdleEndsUnknownForgotten(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newSessionLife(time.Minute, func() time.Time { return now })
	closed := map[string]int{}
	sessions := map[string]func(){}
	for _, id := range []string{"streaming", "idle", "new"} {
		sessions[id] = func() { closed[id]++ }
	}
	// "streaming" holds a request open (its GET); "idle" made one and ended it.
	release := make(chan struct{})
	done := make(chan struct{})
	hold := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release })
	req := func(id string) *http.Request {
		r := httptest.NewRequest("GET", "/mcp", nil)
		r.Header.Set("Mcp-Session-Id", id)
		return r
	}
	go func() { l.serve(httptest.NewRecorder(), req("streaming"), hold); close(done) }()
	l.serve(httptest.NewRecorder(), req("idle"), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	l.serve(httptest.NewRecorder(), req("no-such-session"), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for { // wait until the stream counts
		l.mu.Lock()
		n := l.open["streaming"]
		l.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}

	l.sweep(sessions) // "new" is seen for the first time: its clock starts
	if len(closed) != 0 {
		t.Fatalf("closed %v at once", closed)
	}
	if _, ok := l.last["no-such-session"]; ok {
		t.Error("an id that is no session is remembered")
	}
	now = now.Add(59 * time.Second)
	l.sweep(sessions)
	if len(closed) != 0 {
		t.Fatalf("closed %v before the timeout", closed)
	}
	now = now.Add(2 * time.Second)
	l.sweep(sessions)
	if closed["idle"] != 1 || closed["new"] != 1 || closed["streaming"] != 0 {
		t.Fatalf("after the timeout closed %v, want idle and new once, streaming never", closed)
	}
	delete(sessions, "idle")
	delete(sessions, "new")
	now = now.Add(time.Hour)
	l.sweep(sessions)
	if closed["streaming"] != 0 {
		t.Fatal("a session with its stream open an hour was closed")
	}
	close(release) // the stream ends: the session's clock starts
	<-done
	now = now.Add(30 * time.Second)
	l.sweep(sessions)
	if closed["streaming"] != 0 {
		t.Fatal("closed 30 s after its stream ended")
	}
	now = now.Add(31 * time.Second)
	l.sweep(sessions)
	if closed["streaming"] != 1 {
		t.Fatalf("a minute after its stream ended the session was closed %d times, want 1", closed["streaming"])
	}
	if len(l.open) != 0 || len(l.last) != 0 {
		t.Fatalf("left open=%v last=%v, want nothing", l.open, l.last)
	}
}
