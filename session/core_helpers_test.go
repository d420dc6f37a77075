package session_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// upstream is an in-process go-sdk server whose tools a test can change while it runs
// (a rug pull sends notifications/tools/list_changed), and which records the raw
// argument bytes of every call it received.
type upstream struct {
	srv *mcp.Server
	mu  sync.Mutex
	got map[string][]json.RawMessage // tool -> raw arguments received
	// during, when set for a tool, runs inside that tool's handler.
	during map[string]func(ctx context.Context, req *mcp.CallToolRequest)
}

func newUpstream(name string) *upstream {
	u := &upstream{got: map[string][]json.RawMessage{}, during: map[string]func(context.Context, *mcp.CallToolRequest){}}
	u.srv = mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	return u
}

func hint(b bool) *bool { return &b }

// writeHints are the annotations of a plain write tool (not destructive, closed world).
func writeHints() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: false, DestructiveHint: hint(false), OpenWorldHint: hint(false)}
}

// add (re)defines a tool; redefining a listed tool is a rug pull.
func (u *upstream) add(name, desc string, ann *mcp.ToolAnnotations) {
	u.addSchema(name, desc, `{"type":"object"}`, ann)
}

// addSchema is add with the tool's input schema.
func (u *upstream) addSchema(name, desc, schema string, ann *mcp.ToolAnnotations) {
	u.srv.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema), Annotations: ann},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			u.mu.Lock()
			u.got[name] = append(u.got[name], append(json.RawMessage(nil), req.Params.Arguments...))
			f := u.during[name]
			u.mu.Unlock()
			if f != nil {
				f(ctx, req)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " ran"}}}, nil
		})
}

func (u *upstream) calls(tool string) []json.RawMessage {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]json.RawMessage(nil), u.got[tool]...)
}

func inproc(name string, tr trust.ServerTrust) config.Server {
	return config.Server{Name: name, Transport: config.TransportStdio, Command: "unused", Trust: tr,
		ConnectTimeout: 10 * time.Second, CallTimeout: 10 * time.Second}
}

// startUpstreams starts a Manager on in-process upstream servers.
func startUpstreams(t *testing.T, cfg *config.Config, opts session.Options, ups map[string]*upstream) *session.Manager {
	t.Helper()
	opts.InProcess = map[string]*mcp.Server{}
	for n, u := range ups {
		opts.InProcess[n] = u.srv
	}
	return start(t, cfg, opts)
}

// eventLog keeps every event a Manager reports, for tests that wait on them.
type eventLog struct {
	mu   sync.Mutex
	cond *sync.Cond
	evs  []session.Event
}

func collectEvents(t *testing.T, m *session.Manager) *eventLog {
	l := &eventLog{}
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

// find returns the first event that matches, or nil.
func (l *eventLog) find(match func(session.Event) bool) session.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range l.evs {
		if match(ev) {
			return ev
		}
	}
	return nil
}

// wait blocks until an event matches, or fails the test after d.
func (l *eventLog) wait(t *testing.T, what string, d time.Duration, match func(session.Event) bool) session.Event {
	t.Helper()
	var got session.Event
	waitFor(t, what, d, func() bool { got = l.find(match); return got != nil })
	return got
}

// pending waits for the n-th (from 1) approval request.
func (l *eventLog) pending(t *testing.T, n int) *session.Pending {
	t.Helper()
	var got *session.Pending
	waitFor(t, "an approval request", 10*time.Second, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		seen := 0
		for _, ev := range l.evs {
			if r, ok := ev.(session.ApprovalRequested); ok {
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

func (l *eventLog) count(match func(session.Event) bool) int {
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

func isApproval(ev session.Event) bool { _, ok := ev.(session.ApprovalRequested); return ok }

// auditRecords reads every record of an audit log file.
func auditRecords(t *testing.T, path string) []audit.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []audit.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

type (
	configT    = config.Config
	configTool = config.Tool
)
