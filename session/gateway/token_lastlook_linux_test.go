package gateway_test

// A call, read or prompt get nobody is asked about is looked at once more after its
// decision is on disk: a revoke or a rotation that returned while it was being
// decided stops it, even though no question stood between its first checks and the
// upstream.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/flocktest"
	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

func TestAgentIdentity_UnaskedCallRevokedWhileDecidedNotForwarded(t *testing.T) {
	for _, kind := range []string{"tool call", "resource read", "prompt get"} {
		for _, named := range []bool{true, false} { // a named token revoked, else the default token rotated
			t.Run(fmt.Sprintf("%s, named %v", kind, named), func(t *testing.T) {
				f := lastLookSetup(t, named)
				if err := f.do(kind); err != nil {
					t.Fatalf("the first %s: %v", kind, err)
				}
				waitHeadSynced(t, f.audit) // the first's records are all on disk: nothing else writes
				// Holding the audit log's lock, as another airlock appending would,
				// keeps the next one between its decision and its record.
				release := holdAuditLock(t, f.audit)
				done := make(chan error, 1)
				go func() { done <- f.do(kind) }()
				waitLockWaiter(t, f.audit+".lock")
				f.revoke(t)
				// The revoke has returned; the record is written now, and then it
				// would be forwarded.
				release()
				if err := <-done; err == nil {
					t.Errorf("the agent got an answer to a %s whose token was revoked while it was decided", kind)
				}
				if n := f.ran.Load(); n != 1 {
					t.Errorf("the server ran %d %ss, want only the first", n, kind)
				}
				decision, outcome := f.lastRecords(t)
				if decision != "allow" || !strings.Contains(outcome, "after the call was allowed, so it was not forwarded") {
					t.Errorf("the second %s's records: decision %q, outcome %q; want allow, then withdrawn after it", kind, decision, outcome)
				}
			})
		}
	}
}

// A prompt the gateway did not serve when its get arrived waits for the audit log
// to refuse it; served meanwhile, the get goes on to its handler, which must not
// take the token's earlier look for one made now.
func TestAgentIdentity_PromptServedWhileWaitingAfterRotationNotForwarded(t *testing.T) {
	f := lastLookSetup(t, false)
	if err := f.do("prompt get"); err != nil {
		t.Fatal(err)
	}
	waitHeadSynced(t, f.audit)
	release := holdAuditLock(t, f.audit)
	done := make(chan error, 1)
	go func() {
		_, err := f.agent.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "docs__late"})
		done <- err
	}()
	waitLockWaiter(t, f.audit+".lock") // the refusal of an unserved prompt waits
	var late atomic.Int32
	f.srv.AddPrompt(&mcp.Prompt{Name: "late"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		late.Add(1)
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "late"}}}}, nil
	})
	watcher := mustAgentWithToken(t, f.g, f.watcher, "watcher")
	sessiontest.WaitFor(t, "docs__late served", 10*time.Second, func() bool {
		for p, err := range watcher.Prompts(context.Background(), nil) {
			if err == nil && p.Name == "docs__late" {
				return true
			}
		}
		return false
	})
	f.revoke(t)
	release()
	err := <-done
	if n := late.Load(); n != 0 {
		t.Errorf("prompt late ran %d time(s) after the token was rotated (the agent got %v)", n, err)
	}
}

// A subscription may wait for another holder's round trip to the same server; a
// revoke or a rotation that returned meanwhile stops it when its turn comes, before
// anything is sent for it.
func TestAgentIdentity_SubscriptionWaitingRevokedNotSent(t *testing.T) {
	for _, named := range []bool{true, false} {
		t.Run(fmt.Sprintf("named %v", named), func(t *testing.T) {
			var mu sync.Mutex
			var got []string
			slow := make(chan struct{})
			f := lastLookSetupWith(t, named, lastLookOpts{server: &mcp.ServerOptions{
				SubscribeHandler: func(_ context.Context, r *mcp.SubscribeRequest) error {
					mu.Lock()
					got = append(got, r.Params.URI)
					mu.Unlock()
					if r.Params.URI == "notes://slow" {
						<-slow
					}
					return nil
				},
				UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
			}})
			t.Cleanup(func() { close(slow) })
			watcher := mustAgentWithToken(t, f.g, f.watcher, "watcher")
			go func() {
				_ = watcher.Subscribe(context.Background(), &mcp.SubscribeParams{URI: gateway.RelayURI("docs", "notes://slow")})
			}()
			sessiontest.WaitFor(t, "the watcher's subscription at the server", 10*time.Second, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(got) == 1
			})
			done := make(chan error, 1)
			go func() {
				done <- f.agent.Subscribe(context.Background(), &mcp.SubscribeParams{URI: gateway.RelayURI("docs", "notes://a")})
			}()
			waitGoroutine(t, "(*Manager).subscription", "sync.(*Mutex).Lock") // its turn waits for the watcher's
			f.revoke(t)
			slow <- struct{}{}
			err := <-done
			mu.Lock()
			defer mu.Unlock()
			if slices.Contains(got, "notes://a") || err == nil {
				t.Errorf("the server got %q; the agent got %v: a subscription sent after its token was revoked", got, err)
			}
		})
	}
}

// waitGoroutine waits until a goroutine's stack holds every one of parts.
func waitGoroutine(t *testing.T, parts ...string) {
	t.Helper()
	buf := make([]byte, 1<<22)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		n := runtime.Stack(buf, true)
		for g := range strings.SplitSeq(string(buf[:n]), "\n\n") {
			if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(g, p) }) {
				return
			}
		}
	}
	t.Fatalf("no goroutine waits in %q", parts)
}

// lastLook is an in-process server docs (a read-only tool get, a write put and an
// open-world send, each asking and allowed once by the approver, resources notes://a
// and notes://slow and a prompt early, each counting in ran), a Manager with an audit log,
// a gateway whose token files are real, and an agent connected with a named token
// (named) or the default one. Its taint is kept in memory unless the setup asks for
// a state dir (lastLookOpts.stateDir: taint.json, under its lock, at taint).
type lastLook struct {
	srv     *mcp.Server
	ran     atomic.Int32
	asked   atomic.Int32 // questions the approver allowed once
	m       *session.Manager
	rules   string // the Manager's rules.toml (absent at the start)
	g       *gateway.Gateway
	dir     string
	audit   string
	agent   *mcp.ClientSession
	ctxName string
	named   bool
	tok     string // the agent's token value
	taint   string // taint.json, with lastLookOpts.stateDir
	watcher string // another named token's value
}

// lastLookOpts are what a lastLook setup may vary.
type lastLookOpts struct {
	server    *mcp.ServerOptions
	untrusted bool // docs untrusted (its resources escalated by taint), else trusted
	stateDir  bool // taint in taint.json under a state dir, not in memory
}

func lastLookSetup(t *testing.T, named bool) *lastLook {
	t.Helper()
	return lastLookSetupWith(t, named, lastLookOpts{})
}

// lastLookSetupWith is lastLookSetup with what o varies.
func lastLookSetupWith(t *testing.T, named bool, o lastLookOpts) *lastLook {
	t.Helper()
	f := &lastLook{named: named}
	f.srv = mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, o.server)
	f.srv.AddTool(&mcp.Tool{Name: "get", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: sessiontest.Hint(false)}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.ran.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a doc"}}}, nil
		})
	for _, uri := range []string{"notes://a", "notes://slow"} {
		f.srv.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			f.ran.Add(1)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "a note"}}}, nil
		})
	}
	f.srv.AddPrompt(&mcp.Prompt{Name: "early", Arguments: []*mcp.PromptArgument{{Name: "topic"}}}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		f.ran.Add(1)
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "early"}}}}, nil
	})
	f.srv.AddTool(&mcp.Tool{Name: "put", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{DestructiveHint: sessiontest.Hint(false), OpenWorldHint: sessiontest.Hint(false)}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.ran.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "put"}}}, nil
		})
	f.srv.AddTool(&mcp.Tool{Name: "send", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{DestructiveHint: sessiontest.Hint(false), OpenWorldHint: sessiontest.Hint(true)}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.ran.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sent"}}}, nil
		})
	log, path := sessiontest.OpenAuditLog(t)
	f.audit = path
	f.rules = filepath.Join(t.TempDir(), "rules.toml")
	approver := model.ApproverFunc(func(context.Context, *model.Pending) (model.Response, error) {
		f.asked.Add(1)
		return model.Response{Answer: model.AllowOnce}, nil
	})
	level := trust.Trusted
	if o.untrusted {
		level = trust.Untrusted
	}
	cfg := sessiontest.NewConfig(sessiontest.InProcServer("docs", level, nil))
	opts := session.Options{Audit: log, MemoryTaint: !o.stateDir, InProcess: map[string]*mcp.Server{"docs": f.srv}, RulesFile: f.rules, Approver: approver}
	if o.stateDir {
		cfg.StateDir = t.TempDir()
		f.taint = filepath.Join(cfg.StateDir, "taint.json")
	}
	m := sessiontest.Start(t, cfg, opts)
	f.m = m
	f.dir = t.TempDir()
	def, err := gateway.LoadOrCreateToken(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	f.g, err = gateway.New(m, gateway.Options{Listen: "127.0.0.1:0", Token: def, TokenFile: gateway.TokenPath(f.dir), TokensFile: gateway.TokensPath(f.dir)})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.g.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.g.Close() })
	if f.watcher, err = gateway.AddToken(f.dir, "watcher", time.Now()); err != nil {
		t.Fatal(err)
	}
	tok, name := def, gateway.DefaultTokenName
	if named {
		if tok, err = gateway.AddToken(f.dir, "ci-bot", time.Now()); err != nil {
			t.Fatal(err)
		}
		name = "ci-bot"
	}
	f.ctxName, f.tok = gateway.AgentContext(name), tok
	f.agent = mustAgentWithToken(t, f.g, tok, "claude-code")
	return f
}

// lastRecords are the decision and the outcome ("OUTCOME: ERROR") of the agent's
// last request to docs, as the audit log has them.
func (f *lastLook) lastRecords(t *testing.T) (decision, outcome string) {
	t.Helper()
	for _, r := range sessiontest.AuditRecords(t, f.audit) {
		if r.Context != f.ctxName || r.Server != "docs" {
			continue
		}
		switch r.Kind {
		case "decision":
			decision = r.Decision
		case "outcome":
			outcome = r.Outcome + ": " + r.Error
		}
	}
	return decision, outcome
}

// do makes one request of kind through the gateway; a tool error counts as an
// error.
func (f *lastLook) do(kind string) error {
	ctx := context.Background()
	switch kind {
	case "tool call":
		res, err := f.agent.CallTool(ctx, &mcp.CallToolParams{Name: "docs__get", Arguments: map[string]any{"x": "y"}})
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %s", sessiontest.TextOf(res))
		}
		return err
	case "put call", "send call":
		res, err := f.agent.CallTool(ctx, &mcp.CallToolParams{Name: "docs__" + strings.TrimSuffix(kind, " call"), Arguments: map[string]any{"x": "y"}})
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %s", sessiontest.TextOf(res))
		}
		return err
	case "resource read":
		_, err := f.agent.ReadResource(ctx, &mcp.ReadResourceParams{URI: gateway.RelayURI("docs", "notes://a")})
		return err
	default:
		_, err := f.agent.GetPrompt(ctx, &mcp.GetPromptParams{Name: "docs__early"})
		return err
	}
}

// revoke revokes the agent's named token, or rotates the default one.
func (f *lastLook) revoke(t *testing.T) {
	t.Helper()
	var err error
	if f.named {
		err = gateway.RevokeToken(f.dir, "ci-bot")
	} else {
		_, err = gateway.RotateToken(f.dir)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// holdAuditLock takes the audit log's lock at path as another airlock appending
// would; release lets go of it.
func holdAuditLock(t *testing.T, path string) (release func()) {
	t.Helper()
	held, err := statefile.OpenLock(path + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	if err := statefile.Lock(held); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	return func() {
		if err := statefile.Unlock(held); err != nil {
			t.Error(err)
		}
	}
}

// waitHeadSynced waits until the audit log at path names its last record as synced
// in its head file (the delayed sync has run).
func waitHeadSynced(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		recs := sessiontest.AuditRecords(t, path)
		b, err := os.ReadFile(path + ".head")
		if err == nil && len(recs) > 0 && strings.Contains(string(b), fmt.Sprintf(`"seq":%d,`, recs[len(recs)-1].Seq)) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the audit log's head never named its last record")
}

// waitLockWaiter waits until some process waits for the flock of the file at path
// (/proc/locks lists a blocked request on its inode with "->").
func waitLockWaiter(t *testing.T, path string) {
	t.Helper()
	if !flocktest.Waiter(t, path, 10*time.Second) {
		t.Fatal("the call never waited for the audit log's lock")
	}
}
