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

	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/demo"
	"github.com/airlock-mcp/airlock/session/pins"
)

// damagedAuditSession is a demo session whose audit log was cut: 5 records
// written, 2 kept, so its head names 3 more than it holds.
func damagedAuditSession(t *testing.T) (*session.Manager, context.Context) {
	t.Helper()
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
	t.Cleanup(func() { a.Close() })
	set := demo.NewSet()
	inproc := map[string]*mcp.Server{}
	for _, n := range demo.Names() {
		inproc[n] = set.Server(n)
	}
	pins, _ := pins.Open("")
	m := session.New(demo.Config(), session.Options{InProcess: inproc, Pins: pins, Audit: a, Now: func() time.Time { return fixedNow }})
	t.Cleanup(func() { m.Close() })
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return m, ctx
}

// A damaged audit log is a status of its own that names the problem, not only a
// "denied" after the next call: every call is refused while it lasts.
func TestStatusLine_NamesADamagedAuditLog(t *testing.T) {
	m, ctx := damagedAuditSession(t)
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
	_, err := m.Call(ctx, model.CallRequest{Server: "docs", Tool: "search_docs", Args: args})
	if err == nil {
		t.Fatal("a call with the damaged log ran")
	}
	h.m.call.Begin(h.m.call.Gen+1, tool, args, fixedNow, func() {})
	h.m.callDone(callDoneMsg{gen: h.m.call.Gen, err: err})
	if !strings.Contains(h.m.status, "audit log") {
		t.Errorf("a call refused for the audit log says only %q", h.m.status)
	}
}

// At every size the status line says what a damaged log does and what to run, and
// its "(v: all of it)" is true: Activity holds the whole problem and both commands.
func TestStatusLine_DamagedAuditLogSaysWhatToRun(t *testing.T) {
	m, _ := damagedAuditSession(t)
	for _, sz := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		h := newHarnessFor(t, m, sz[0], sz[1], false, Options{Title: "demo"})
		line := ansi.Strip(h.m.statusLine())
		if !strings.HasPrefix(line, "✗ audit log damaged") || !strings.Contains(line, "refused") {
			t.Errorf("%dx%d: the status line does not lead with the damaged log:\n%s", sz[0], sz[1], line)
		}
		if sz[0] >= 80 && !strings.Contains(line, "airlock audit verify") {
			t.Errorf("%dx%d: the status line does not say what to run:\n%s", sz[0], sz[1], line)
		}
		h.keys("v")
		screen := h.plain()
		// The entry wraps inside the pane: read it as one run of words.
		words := strings.Join(strings.Fields(strings.ReplaceAll(screen, "│", " ")), " ")
		for _, want := range []string{"is damaged, so every call is refused", "3 records removed", "`airlock audit verify`", "`airlock audit seal --start-new`"} {
			if !strings.Contains(words, want) {
				t.Errorf("%dx%d: Activity (v: all of it) lacks %q:\n%s", sz[0], sz[1], want, screen)
			}
		}
	}
}
