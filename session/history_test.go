package session_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// historyHas reports whether h holds a message going out (or in) of kind with method.
func historyHas(h model.History, out bool, kind, method string) bool {
	for _, e := range h.Messages {
		if e.Out == out && e.Kind == kind && e.Method == method && len(e.Raw) > 0 && !e.At.IsZero() {
			return true
		}
	}
	return false
}

func historyList(h model.History) string {
	var b strings.Builder
	for _, e := range h.Messages {
		fmt.Fprintf(&b, "%d out=%v %s %s %s; ", e.Seq, e.Out, e.Kind, e.Method, e.ID)
	}
	return b.String()
}

// wantCallAndNotification calls echo (whose handler adds a tool, so that the
// server sends tools/list_changed) and wants the history to hold both directions of
// the call, by method, and the notification.
func wantCallAndNotification(t *testing.T, m *session.Manager, server string) {
	t.Helper()
	if _, err := m.Call(context.Background(), model.CallRequest{Server: server, Tool: "echo", Args: sessiontest.Args(`{"say":"hi"}`)}); err != nil {
		t.Fatal(err)
	}
	sessiontest.WaitFor(t, "the call and the notification in the history", 5*time.Second, func() bool {
		h := m.History(server)
		return historyHas(h, true, "request", "tools/call") && historyHas(h, false, "response", "tools/call") &&
			historyHas(h, false, "notification", "notifications/tools/list_changed") &&
			historyHas(h, true, "request", "initialize")
	})
	h := m.History(server)
	t.Logf("history: %s", historyList(h))
	for _, e := range h.Messages {
		if e.Kind == "request" && e.Method == "tools/call" && !strings.Contains(string(e.Raw), `"say":"hi"`) {
			t.Errorf("the call's raw bytes lack its arguments: %s", e.Raw)
		}
	}
}

func echoUpstream() *sessiontest.Upstream {
	u := sessiontest.NewUpstream("hist")
	u.Add("echo", "Echo.", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: sessiontest.Hint(false)})
	u.During["echo"] = func(context.Context, *mcp.CallToolRequest) {
		u.Add("late", "Added during a call.", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: sessiontest.Hint(false)})
	}
	return u
}

// Every JSON-RPC message of an in-process server's connection is in its history,
// both ways, with methods: the call's request and its response (matched by id) and
// the server's notification.
func TestHistoryKeepsCallAndNotification(t *testing.T) {
	u := echoUpstream()
	cfg := sessiontest.NewConfig(sessiontest.Inproc("hist", trust.Trusted))
	m := sessiontest.StartUpstreams(t, cfg, session.Options{}, map[string]*sessiontest.Upstream{"hist": u})
	sessiontest.MustServer(t, m, "hist", model.StatusReady)
	wantCallAndNotification(t, m, "hist")
}

// Over streamable HTTP the history is kept in the round trip: the POSTed request,
// its response (event stream or JSON) and the notification on the standalone stream.
func TestHistoryOverStreamableHTTP(t *testing.T) {
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResponse), func(t *testing.T) {
			u := echoUpstream()
			srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return u.Srv },
				&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))
			t.Cleanup(srv.Close)
			cfg := sessiontest.NewConfig(config.Server{Name: "hist", Transport: config.TransportHTTP, URL: srv.URL, Trust: trust.Trusted,
				ConnectTimeout: 10 * time.Second, CallTimeout: 10 * time.Second})
			m := sessiontest.Start(t, cfg, session.Options{})
			sessiontest.MustServer(t, m, "hist", model.StatusReady)
			wantCallAndNotification(t, m, "hist")
		})
	}
}

// With the history off nothing is kept.
func TestHistoryOff(t *testing.T) {
	u := echoUpstream()
	cfg := sessiontest.NewConfig(sessiontest.Inproc("hist", trust.Trusted))
	m := sessiontest.StartUpstreams(t, cfg, session.Options{NoHistory: true}, map[string]*sessiontest.Upstream{"hist": u})
	sessiontest.MustServer(t, m, "hist", model.StatusReady)
	if h := m.History("hist"); len(h.Messages) != 0 {
		t.Fatalf("history off kept %d messages", len(h.Messages))
	}
}

// A stdio server's tools/list page is split before go-sdk reads it (go-sdk gets an
// empty list); the history keeps the server's own bytes, with every tool, and a call
// both ways.
func TestHistoryStdioKeepsTheServersListing(t *testing.T) {
	cfg := sessiontest.NewConfig(sessiontest.TestServer(t, "docs", "demo-docs", trust.Trusted))
	m := sessiontest.Start(t, cfg, session.Options{})
	sessiontest.MustServer(t, m, "docs", model.StatusReady)
	if session.PagesSplitEarly(m, "docs") == 0 {
		t.Fatal("the listing was not split early: the test tests nothing")
	}
	if _, err := m.Call(context.Background(), model.CallRequest{Server: "docs", Tool: "search_docs", Args: sessiontest.Args(`{"query":"tier"}`)}); err != nil {
		t.Fatal(err)
	}
	h := m.History("docs")
	var listed bool
	for _, e := range h.Messages {
		if !e.Out && e.Kind == "response" && e.Method == "tools/list" {
			listed = true
			if !strings.Contains(string(e.Raw), `"search_docs"`) {
				t.Errorf("the history's tools/list response is not the server's: %s", e.Raw)
			}
		}
	}
	if !listed || !historyHas(h, true, "request", "tools/call") || !historyHas(h, false, "response", "tools/call") {
		t.Fatalf("history: %s", historyList(h))
	}
}
