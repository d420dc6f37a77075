package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/demo"
)

// A damaged audit log is a status of its own that names the problem, not only a
// "denied" after the next call: every call is refused while it lasts.
func TestStatusLine_NamesADamagedAuditLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := a.Append(audit.Record{Kind: "decision", Args: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, bytes.Join(bytes.SplitAfter(b, []byte("\n"))[:2], nil), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err = audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	set := demo.NewSet()
	inproc := map[string]*mcp.Server{}
	for _, n := range demo.Names() {
		inproc[n] = set.Server(n)
	}
	pins, _ := session.OpenPins("")
	m := session.New(demo.Config(), session.Options{InProcess: inproc, Pins: pins, Audit: a, Now: func() time.Time { return fixedNow }})
	t.Cleanup(func() { m.Close() })
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	h := newHarnessFor(t, m, 400, 30, false, Options{Title: "demo"})
	line := h.m.statusLine()
	if !strings.Contains(line, "✗ audit log damaged") || !strings.Contains(line, "3 records removed from the end") {
		t.Errorf("the status line does not name the damaged audit log:\n%s", line)
	}
	tool, ok := m.Snapshot().Tool("docs", "search_docs")
	if !ok {
		t.Fatal("no docs__search_docs")
	}
	args := json.RawMessage(`{"query":"x"}`)
	_, err = m.Call(ctx, session.CallRequest{Server: "docs", Tool: "search_docs", Args: args})
	if err == nil {
		t.Fatal("a call with the damaged log ran")
	}
	h.m.call.begin(h.m.call.gen+1, tool, args, fixedNow, func() {})
	h.m.callDone(callDoneMsg{gen: h.m.call.gen, err: err})
	if !strings.Contains(h.m.status, "audit log") {
		t.Errorf("a call refused for the audit log says only %q", h.m.status)
	}
}
