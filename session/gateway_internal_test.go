package session

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
