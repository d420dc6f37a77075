// Package sessiontest holds what the tests of session and its sub-packages share:
// stdio servers played by the test binary itself (Serve, Main), in-process upstream
// servers, and helpers that start a Manager and wait on it. It is non-test code used
// only by tests; nothing outside _test.go files may import it.
package sessiontest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// TestServer is a stdio server played by this test binary in the given mode.
func TestServer(t *testing.T, name, mode string, tr trust.ServerTrust) config.Server {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Under -race a child would otherwise sleep a second before it exits (the race
	// runtime's atexit_sleep_ms), and every Close waits for that.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	return config.Server{
		Name:           name,
		Transport:      config.TransportStdio,
		Command:        self,
		Env:            map[string]string{"AIRLOCK_TEST_SERVER": mode, "GORACE": gorace},
		ConnectTimeout: 20 * time.Second,
		CallTimeout:    20 * time.Second,
		Trust:          tr,
	}
}

// RawServer is a stdio server that answers with the given script byte for byte.
func RawServer(t *testing.T, name string, tr trust.ServerTrust, script string) config.Server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	s := TestServer(t, name, "raw", tr)
	s.Env["AIRLOCK_TEST_RAW"] = path
	return s
}

func NewConfig(servers ...config.Server) *config.Config {
	return &config.Config{
		Policy:          trust.DefaultPolicy(),
		ApprovalTimeout: time.Minute,
		Servers:         servers,
	}
}

// Start builds a Manager, starts it, waits for every first attempt, and closes it
// when the test ends.
func Start(t *testing.T, cfg *config.Config, opts session.Options) *session.Manager {
	t.Helper()
	m := session.New(cfg, opts)
	t.Cleanup(func() { m.Close() })
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatalf("waiting for servers: %v", err)
	}
	return m
}

func MustServer(t *testing.T, m *session.Manager, name string, want model.Status) model.ServerInfo {
	t.Helper()
	sv, ok := m.Snapshot().Server(name)
	if !ok {
		t.Fatalf("no server %q in snapshot", name)
	}
	if sv.Status != want {
		t.Fatalf("server %s is %v (err %v), want %v", name, sv.Status, sv.Err, want)
	}
	return sv
}

func MustTool(t *testing.T, m *session.Manager, server, tool string) model.ToolInfo {
	t.Helper()
	ti, ok := m.Snapshot().Tool(server, tool)
	if !ok {
		var names []string
		for _, x := range m.Snapshot().Tools {
			names = append(names, x.Ref.Qualified())
		}
		t.Fatalf("no tool %s__%s; have %s", server, tool, strings.Join(names, ", "))
	}
	return ti
}

func WantTier(t *testing.T, m *session.Manager, server, tool string, want trust.Tier) model.ToolInfo {
	t.Helper()
	ti := MustTool(t, m, server, tool)
	if ti.Class.Tier != want {
		t.Errorf("%s__%s tier = %v, want %v (reasons: %q)", server, tool, ti.Class.Tier, want, ti.Class.Reasons)
	}
	return ti
}

// WaitFor polls cond until it holds or the deadline passes.
func WaitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Answerer answers every approval the Manager's queue raises with the answers given,
// in order, and records the pending calls it saw.
type Answerer struct {
	Seen chan *model.Pending
}

func AnswerWith(t *testing.T, m *session.Manager, answers ...model.Response) *Answerer {
	t.Helper()
	a := &Answerer{Seen: make(chan *model.Pending, 16)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		i := 0
		for {
			ev, ok := m.Next(ctx)
			if !ok {
				return
			}
			req, ok := ev.(model.ApprovalRequested)
			if !ok {
				continue
			}
			a.Seen <- req.Pending
			if i < len(answers) {
				_ = m.Engine().Answer(req.Pending.ID, answers[i])
				i++
			}
		}
	}()
	return a
}

func TextOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func Args(s string) json.RawMessage { return json.RawMessage(s) }

// Upstream is an in-process go-sdk server whose tools a test can change while it runs
// (a rug pull sends notifications/tools/list_changed), and which records the raw
// argument bytes of every call it received.
type Upstream struct {
	Srv *mcp.Server
	mu  sync.Mutex
	got map[string][]json.RawMessage // tool -> raw arguments received
	// During, when set for a tool, runs inside that tool's handler.
	During map[string]func(ctx context.Context, req *mcp.CallToolRequest)
}

func NewUpstream(name string) *Upstream {
	u := &Upstream{got: map[string][]json.RawMessage{}, During: map[string]func(context.Context, *mcp.CallToolRequest){}}
	u.Srv = mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	return u
}

func Hint(b bool) *bool { return &b }

// WriteHints are the annotations of a plain write tool (not destructive, closed world).
func WriteHints() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: false, DestructiveHint: Hint(false), OpenWorldHint: Hint(false)}
}

// Add (re)defines a tool; redefining a listed tool is a rug pull.
func (u *Upstream) Add(name, desc string, ann *mcp.ToolAnnotations) {
	u.AddSchema(name, desc, `{"type":"object"}`, ann)
}

// AddSchema is add with the tool's input schema.
func (u *Upstream) AddSchema(name, desc, schema string, ann *mcp.ToolAnnotations) {
	u.Srv.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema), Annotations: ann},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			u.mu.Lock()
			u.got[name] = append(u.got[name], append(json.RawMessage(nil), req.Params.Arguments...))
			f := u.During[name]
			u.mu.Unlock()
			if f != nil {
				f(ctx, req)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " ran"}}}, nil
		})
}

// PriceSchema is an output schema that wants the structured content {"price": N}.
const PriceSchema = `{"type":"object","properties":{"price":{"type":"number"}},"required":["price"]}`

// AddStructured defines a read-only tool that declares outputSchema and answers
// every call with a text block and, unless structured is "", the structured
// content structured, byte for byte as given.
func (u *Upstream) AddStructured(name, outputSchema, structured string) {
	u.Srv.AddTool(&mcp.Tool{Name: name, Description: "Quote a price.", InputSchema: json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(outputSchema), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: Hint(false)}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " ran"}}}
			if structured != "" {
				res.StructuredContent = json.RawMessage(structured)
			}
			return res, nil
		})
}

func (u *Upstream) Calls(tool string) []json.RawMessage {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]json.RawMessage(nil), u.got[tool]...)
}

func Inproc(name string, tr trust.ServerTrust) config.Server {
	return config.Server{Name: name, Transport: config.TransportStdio, Command: "unused", Trust: tr,
		ConnectTimeout: 10 * time.Second, CallTimeout: 10 * time.Second}
}

// StartUpstreams starts a Manager on in-process upstream servers.
func StartUpstreams(t *testing.T, cfg *config.Config, opts session.Options, ups map[string]*Upstream) *session.Manager {
	t.Helper()
	opts.InProcess = map[string]*mcp.Server{}
	for n, u := range ups {
		opts.InProcess[n] = u.Srv
	}
	return Start(t, cfg, opts)
}

// EventLog keeps every event a Manager reports, for tests that wait on them.
type EventLog struct {
	mu   sync.Mutex
	cond *sync.Cond
	evs  []model.Event
}

func CollectEvents(t *testing.T, m *session.Manager) *EventLog {
	l := &EventLog{}
	l.cond = sync.NewCond(&l.mu)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for {
			ev, ok := m.Next(ctx)
			if !ok {
				return
			}
			l.mu.Lock()
			l.evs = append(l.evs, ev)
			l.cond.Broadcast()
			l.mu.Unlock()
		}
	}()
	return l
}

// Find returns the first event that matches, or nil.
func (l *EventLog) Find(match func(model.Event) bool) model.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range l.evs {
		if match(ev) {
			return ev
		}
	}
	return nil
}

// Wait blocks until an event matches, or fails the test after d.
func (l *EventLog) Wait(t *testing.T, what string, d time.Duration, match func(model.Event) bool) model.Event {
	t.Helper()
	var got model.Event
	WaitFor(t, what, d, func() bool { got = l.Find(match); return got != nil })
	return got
}

// Pending waits for the n-th (from 1) approval request.
func (l *EventLog) Pending(t *testing.T, n int) *model.Pending {
	t.Helper()
	var got *model.Pending
	WaitFor(t, "an approval request", 10*time.Second, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		seen := 0
		for _, ev := range l.evs {
			if r, ok := ev.(model.ApprovalRequested); ok {
				if seen++; seen == n {
					got = r.Pending
					return true
				}
			}
		}
		return false
	})
	return got
}

func (l *EventLog) Count(match func(model.Event) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, ev := range l.evs {
		if match(ev) {
			n++
		}
	}
	return n
}

func IsApproval(ev model.Event) bool { _, ok := ev.(model.ApprovalRequested); return ok }

// AuditRecords reads every record of an audit log file, open or not: the fill an
// open log keeps past its last record (blank lines) is no record, and a blank
// line before the last record fails the test.
func AuditRecords(t *testing.T, path string) []audit.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Record
	for line := range bytes.Lines(bytes.TrimRight(b, "\n")) {
		var r audit.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// Events is a copy of every event reported so far.
func (l *EventLog) Events() []model.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]model.Event(nil), l.evs...)
}
