// Package session is everything in airlock that talks to the outside: connections to
// MCP servers (stdio subprocesses, streamable HTTP, SSE, in-process), tool listing,
// pins, the approval engine every call goes through, and later the agent gateway and
// the audit log. It owns every goroutine it starts and reports through typed events;
// it never imports the UI or bubbletea.
package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// Status is a server connection's state.
type Status int

// The statuses.
const (
	StatusConnecting Status = iota
	StatusReady
	StatusFailed
)

// String returns connecting, ready or failed.
func (s Status) String() string {
	switch s {
	case StatusConnecting:
		return "connecting"
	case StatusReady:
		return "ready"
	case StatusFailed:
		return "failed"
	}
	return fmt.Sprintf("status(%d)", int(s))
}

// MarshalText encodes the status as its word.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// DefaultProtocol is the protocol version airlock asks for when a server's config
// leaves protocol empty. It is the newest version negotiated through the initialize
// handshake, which every server generation answers: the 2026-07-28 server/discover
// probe is only sent when a server is configured for it, because an old stdio server
// that exits on an unknown method would otherwise cost a respawn.
const DefaultProtocol = "2025-11-25"

// Options configures a Manager beyond its config.
type Options struct {
	// InProcess maps server names to in-process go-sdk servers, reached over in-memory
	// transports instead of their configured transport (airlock demo, tests).
	InProcess map[string]*mcp.Server
	// Approver answers calls that ask. Nil selects the Manager's own queue, answered
	// through Pending and Answer (the TUI's way).
	Approver Approver
	// Pins is the pin store; nil keeps pins in memory for this run only.
	Pins *Pins
	// Now returns the time; nil uses time.Now.
	Now func() time.Time
	// ClientName is the name airlock gives itself in initialize.
	ClientName string
	// Version is airlock's version, sent in initialize.
	Version string
	// Audit, when set, records every decision and call outcome; an allowed call whose
	// record cannot be synced is denied (fail closed).
	Audit *Audit
	// OAuth configures authorizing with servers that have an oauth table.
	OAuth OAuthOptions
}

// Manager holds the connections to every configured server and decides every call.
// Build it with New, start it with Start, and Close it when done. Its methods are
// safe for concurrent use.
type Manager struct {
	cfg     *config.Config
	opts    Options
	pins    *Pins
	oauth   *oauthStore
	events  *queue
	engine  *Engine
	servers map[string]*server
	order   []string

	ctx    context.Context // lives until Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	first  sync.WaitGroup // first connection attempt of every server

	elicit elicitations

	subsMu sync.Mutex
	subs   []func()

	mu          sync.Mutex
	over        Overrides         // the person's live changes; guarded by mu
	overVersion map[string]uint64 // per server, bumped with each live change to it; guarded by mu
	snap        *Snapshot         // cached; nil when something changed
	version     uint64

	closeOnce sync.Once
}

// New builds a Manager for cfg. It connects nothing until Start.
func New(cfg *config.Config, opts Options) *Manager {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ClientName == "" {
		opts.ClientName = "airlock"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	pins := opts.Pins
	if pins == nil {
		pins, _ = OpenPins("")
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		cfg:     cfg,
		opts:    opts,
		pins:    pins,
		oauth:   newOAuthStore(cfg.StateDir),
		events:  newQueue(),
		servers: map[string]*server{},
		ctx:     ctx,
		cancel:  cancel,
	}
	approver := opts.Approver
	var q *approvalQueue
	if approver == nil {
		q = newApprovalQueue(m.events)
		approver = q
	}
	m.engine = newEngine(approver, q, cfg.ApprovalTimeout, opts.Now)
	for _, sc := range cfg.Servers {
		m.servers[sc.Name] = newServer(m, sc)
		m.order = append(m.order, sc.Name)
	}
	sort.Strings(m.order)
	return m
}

// Config returns the configuration the Manager runs on.
func (m *Manager) Config() *config.Config { return m.cfg }

// Engine returns the approval engine every call goes through.
func (m *Manager) Engine() *Engine { return m.engine }

// Start connects every server concurrently, each bounded by its own connect timeout.
// It returns at once; progress arrives as events, and Wait blocks until every server
// has made its first attempt.
func (m *Manager) Start() {
	for _, name := range m.order {
		s := m.servers[name]
		m.first.Add(1)
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			defer m.first.Done()
			s.connect(m.ctx)
		}()
	}
}

// Wait blocks until every server has finished its first connection attempt (ready or
// failed) or ctx ends.
func (m *Manager) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { m.first.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Next blocks until the next event, ctx ends, or the Manager closes (false).
func (m *Manager) Next(ctx context.Context) (Event, bool) { return m.events.next(ctx) }

// Reconnect drops a server's connection (if any) and connects it again. Events from
// the old connection are stale from then on.
func (m *Manager) Reconnect(name string) error {
	s, ok := m.servers[name]
	if !ok {
		return fmt.Errorf("no server %q", name)
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		s.connect(m.ctx)
	}()
	return nil
}

// Stderr returns the kept stderr lines of a server (raw: escape before display).
func (m *Manager) Stderr(name string) []string {
	if s, ok := m.servers[name]; ok {
		return s.stderr.Lines()
	}
	return nil
}

// Close disconnects every server, stops every child process group, and ends event
// delivery. Close is idempotent and safe for concurrent use.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		m.cancel()
		var wg sync.WaitGroup
		for _, s := range m.servers {
			wg.Add(1)
			go func() { defer wg.Done(); s.disconnect() }()
		}
		wg.Wait()
		m.wg.Wait()
		m.engine.close()
		m.events.close()
	})
	return nil
}

// changed invalidates the cached snapshot and reports the server's new state.
func (m *Manager) changed(name string, gen uint64, st Status) {
	m.mu.Lock()
	m.snap = nil
	m.version++
	m.mu.Unlock()
	m.events.push(ServerChanged{Server: name, Gen: gen, Status: st})
	m.notify()
}

// subscribe registers f to run after every change; f must not block.
func (m *Manager) subscribe(f func()) {
	m.subsMu.Lock()
	defer m.subsMu.Unlock()
	m.subs = append(m.subs, f)
}

func (m *Manager) notify() {
	m.subsMu.Lock()
	subs := append([]func(){}, m.subs...)
	m.subsMu.Unlock()
	for _, f := range subs {
		f()
	}
}

// ErrNoTool is returned by Call for a tool the server does not list.
var ErrNoTool = errors.New("no such tool")

// ErrNotReady is returned by Call when the tool's server is not connected.
var ErrNotReady = errors.New("server is not ready")

// DeniedError is returned by Call when the call was not allowed to run.
type DeniedError struct {
	Verdict trust.Verdict
	// Reason is the person's reason for a denial, if they gave one.
	Reason string
}

func (e *DeniedError) Error() string {
	msg := "call denied"
	switch e.Verdict.By {
	case trust.DecidedByUser:
		msg = "call denied by the person at airlock"
	case trust.DecidedByTimeout:
		msg = "call denied: nobody answered the approval in time"
	case trust.DecidedByPolicy:
		msg = "call denied by policy"
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	} else if len(e.Verdict.Reasons) > 0 {
		msg += ": " + e.Verdict.Reasons[len(e.Verdict.Reasons)-1]
	}
	return msg
}

// CallRequest is one tool call, from the person or from an agent.
type CallRequest struct {
	// Context is the taint and grant context: "" means the person's own calls.
	Context string
	// Client names the agent client for dialogs ("" for the person).
	Client string
	Server string
	Tool   string
	// Args are the exact argument bytes: a JSON object, or empty for {}. They are
	// what the person approves, what is hashed, and what is forwarded.
	Args json.RawMessage
	// OnProgress, when set, receives progress notifications for this call.
	OnProgress func(Progress)
}

// Outcome is what happened to a call that ran.
type Outcome struct {
	CallID   string
	Verdict  trust.Verdict
	Result   *mcp.CallToolResult
	Duration time.Duration
}

// Call decides req through the approval engine and, when allowed, forwards it with the
// server's call timeout. Cancelling ctx withdraws a pending approval or cancels the
// running call (the server is sent notifications/cancelled). A denial returns a
// *DeniedError.
func (m *Manager) Call(ctx context.Context, req CallRequest) (*Outcome, error) {
	start := m.opts.Now()
	out, err := m.decideAndCall(ctx, req)
	m.events.push(callFinished(req, m.Snapshot(), start, m.opts.Now(), out, err))
	return out, err
}

// decideAndCall is Call without the CallFinished event.
func (m *Manager) decideAndCall(ctx context.Context, req CallRequest) (*Outcome, error) {
	s, ok := m.servers[req.Server]
	if !ok {
		return nil, fmt.Errorf("calling %s: no server %q", trust.Ref{Server: req.Server, Tool: req.Tool}.Qualified(), req.Server)
	}
	if len(req.Args) == 0 {
		req.Args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(req.Args, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("calling %s__%s: arguments must be a JSON object", req.Server, req.Tool)
	}
	tool, ok := m.Snapshot().Tool(req.Server, req.Tool)
	if !ok {
		return nil, fmt.Errorf("calling %s__%s: %w", req.Server, req.Tool, ErrNoTool)
	}
	callID := m.engine.nextCallID()
	base := m.auditBase(callID, req, tool)
	verdict, reason, err := m.engine.authorize(ctx, callID, req, tool)
	if err != nil {
		_ = m.auditDecision(base, verdict, reason)
		return nil, err
	}
	if verdict.Action != trust.Allow {
		_ = m.auditDecision(base, verdict, reason)
		return nil, &DeniedError{Verdict: verdict, Reason: reason}
	}
	// The approved call's record is on disk before the call is forwarded.
	if err := m.auditDecision(base, verdict, reason); err != nil {
		denied := trust.Verdict{Action: trust.Deny, By: trust.DecidedByPolicy, Reasons: append(verdict.Reasons, "the audit log cannot be written, so the call is denied: "+err.Error())}
		return nil, &DeniedError{Verdict: denied}
	}
	start := m.opts.Now()
	res, err := s.call(ctx, callID, req, tool)
	out := &Outcome{CallID: callID, Verdict: verdict, Result: res, Duration: m.opts.Now().Sub(start)}
	m.auditOutcome(base, out, err)
	if err != nil {
		// An error's text may be the server's own words (a JSON-RPC error message),
		// and it is handed on: it taints like a result, unless the caller withdrew.
		if trust.Taints(tool.Class) && ctx.Err() == nil {
			m.engine.taint(req.Context, trust.Taint{By: tool.Ref, CallID: callID, At: m.opts.Now(), Channel: trust.ChannelError})
		}
		return out, err
	}
	if trust.Taints(tool.Class) {
		m.engine.taint(req.Context, trust.Taint{By: tool.Ref, CallID: callID, At: m.opts.Now(), Channel: trust.ChannelResult})
	}
	return out, nil
}

// auditBase is what every record of one call shares, or nil when no audit log is
// configured (then nothing is hashed or redacted at all).
func (m *Manager) auditBase(callID string, req CallRequest, tool ToolInfo) *Record {
	if m.opts.Audit == nil {
		return nil
	}
	return &Record{
		CallID:     callID,
		Context:    ctxKey(req.Context),
		Client:     req.Client,
		Server:     req.Server,
		Tool:       req.Tool,
		Tier:       tool.Class.Tier.String(),
		ArgsSHA256: ArgsSHA256(req.Args),
		Args:       Redact(req.Args),
	}
}

// auditDecision records how a call was decided; it fails only when the log cannot
// be written.
func (m *Manager) auditDecision(base *Record, v trust.Verdict, reason string) error {
	if base == nil {
		return nil
	}
	r := *base
	r.Kind, r.Decision, r.DecidedBy, r.Reason = "decision", "deny", string(v.By), reason
	if v.Action == trust.Allow {
		r.Decision = "allow"
	}
	r.TS = m.opts.Now().UTC()
	return m.opts.Audit.Append(r)
}

// auditOutcome records how a forwarded call ended (best effort: the call already ran).
func (m *Manager) auditOutcome(base *Record, out *Outcome, err error) {
	if base == nil {
		return
	}
	r := *base
	r.Kind, r.DurationMS = "outcome", out.Duration.Milliseconds()
	switch {
	case err != nil:
		r.Outcome, r.Error = "failed", err.Error()
	case out.Result.IsError:
		r.Outcome = "tool-error"
	default:
		r.Outcome = "ok"
	}
	r.TS = m.opts.Now().UTC()
	_ = m.opts.Audit.Append(r)
}
