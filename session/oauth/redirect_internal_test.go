package oauth

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/airlock-mcp/airlock/session/config"
)

type quietReporter struct{ urls chan string }

func (r quietReporter) AuthorizationRequested(u string) {
	if r.urls != nil {
		r.urls <- u
	}
}
func (quietReporter) Log(string)  {}
func (quietReporter) Error(error) {}

func listenable(port int) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// The redirect URI airlock registers names a port it picked when the handler was
// built; the authorization may come minutes later. Closed and listened on again
// then, the port had been taken by another program in between (the redirect
// listener failed with "address already in use"), so it is held from New to Close.
func TestHandler_PickedRedirectPortIsHeldUntilClose(t *testing.T) {
	h, err := New("s", "https://mcp.example/", config.OAuth{}, NewStore(""), Options{}, quietReporter{})
	if err != nil {
		t.Fatal(err)
	}
	if listenable(h.port) {
		t.Fatalf("port %d is free after New: another program may take it before the redirect comes", h.port)
	}
	// Nothing is waiting: a stray request to the held port is told so.
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(h.port) + redirectPath + "?state=x&code=y")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "not the authorization airlock is waiting for") {
		t.Errorf("stray redirect with nothing waiting: %d %q", resp.StatusCode, body)
	}
	h.Close()
	if !listenable(h.port) {
		t.Errorf("port %d is still held after Close", h.port)
	}
}

// A configured redirect_port is listened on only while authorizing: two airlock
// processes with the same configuration both start.
func TestHandler_ConfiguredRedirectPortIsListenedOnOnlyWhileAuthorizing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	h, err := New("s", "https://mcp.example/", config.OAuth{RedirectPort: port}, NewStore(""), Options{}, quietReporter{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if !listenable(port) {
		t.Fatalf("the configured port %d is held with no authorization running", port)
	}
}

// The held port serves each authorization in turn, and only the redirect carrying
// the waiting authorization's state ends its wait.
func TestHandler_HeldPortServesEachAuthorizationInTurn(t *testing.T) {
	urls := make(chan string, 4)
	h, err := New("s", "https://mcp.example/", config.OAuth{}, NewStore(""), Options{OpenBrowser: func(context.Context, string) error { return nil }}, quietReporter{urls: urls})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	base := "http://127.0.0.1:" + strconv.Itoa(h.port) + redirectPath
	for round, state := range []string{"first-state", "second-state"} {
		type got struct {
			res *auth.AuthorizationResult
			err error
		}
		out := make(chan got, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		go func() {
			res, err := h.fetch(ctx, &auth.AuthorizationArgs{URL: "https://as.example/authorize?state=" + state})
			out <- got{res, err}
		}()
		<-urls
		for _, q := range []string{"?state=stale&code=bad", "?state=" + state + "&code=code" + strconv.Itoa(round)} {
			resp, err := http.Get(base + q)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		g := <-out
		cancel()
		if g.err != nil || g.res.Code != "code"+strconv.Itoa(round) || g.res.State != state {
			t.Fatalf("round %d: %+v %v", round, g.res, g.err)
		}
	}
}
