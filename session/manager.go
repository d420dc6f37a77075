package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/secrets"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/argcheck"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/conn"
	"github.com/airlock-mcp/airlock/session/oauth"
	"github.com/airlock-mcp/airlock/session/pins"
	"github.com/airlock-mcp/airlock/trust"
)

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
	Approver model.Approver
	// Pins is the pin store; nil keeps pins in memory for this run only.
	Pins *pins.Store
	// Now returns the time; nil uses time.Now.
	Now func() time.Time
	// NoHistory turns the protocol history off (History then holds nothing).
	NoHistory bool
	// ClientName is the name airlock gives itself in initialize.
	ClientName string
	// Version is airlock's version, sent in initialize.
	Version string
	// Audit, when set, records every decision and call outcome; an allowed call whose
	// record cannot be synced is denied (fail closed).
	Audit *audit.Log
	// OAuth configures authorizing with servers that have an oauth table.
	OAuth oauth.Options
	// MemoryTaint keeps taint (and the rate limits' counts) in memory for this run
	// only, even with a state dir (airlock demo: every demo starts clean and leaves
	// the real taint.json and rates.json alone).
	MemoryTaint bool
	// Asker answers servers' elicitation and sampling requests where no TUI reads
	// the events (airlock call, check); nil turns them into events.
	Asker model.Asker
	// RulesFile is the remembered-decisions file (RulesPath); "" keeps remembered
	// rules in memory for this run only.
	RulesFile string
}

// Manager holds the connections to every configured server and decides every call.
// Build it with New, start it with Start, and Close it when done. Its methods are
// safe for concurrent use.
type Manager struct {
	cfg     *config.Config
	opts    Options
	pins    *pins.Store
	tokens  *oauth.Store
	events  *queue
	engine  *approval.Engine
	servers map[string]*server
	order   []string
	// argSchemas checks every call's arguments against its tool's input schema,
	// and every result against its tool's output schema.
	argSchemas argcheck.Cache
	// agentHist keeps each gateway agent session's protocol messages (nil with
	// NoHistory).
	agentHist *conn.AgentHistories

	ctx    context.Context // lives until Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	first  sync.WaitGroup // first connection attempt of every server

	elicit   elicitations
	sampling samplings

	// publish is held for writing while a new listing, a status or a live change is
	// stored and the cached snapshot dropped, and for reading while a call is checked
	// one last time before it is forwarded: the check always sees every listing that
	// was published before it.
	publish sync.RWMutex
	stale   chan struct{} // kicks the check of waiting questions against the listing

	inflightMu sync.Mutex
	inflight   map[string]map[string]bool // server -> IDs of the calls forwarded to it and not yet returned

	subsMu sync.Mutex
	subs   []func()
	// updatedSubs run for every ResourceUpdated (the gateway's relay, session/gateway/relay.go).
	updatedSubs []func(model.ResourceUpdated)

	mu          sync.Mutex
	over        model.Overrides   // the person's live changes; guarded by mu
	overVersion map[string]uint64 // per server, bumped with each live change to it; guarded by mu
	snap        *model.Snapshot   // cached; nil when something changed
	version     uint64

	// buildMu serialises snapshot builds; it is taken before mu and guards build's
	// state kept from one build to the next.
	buildMu sync.Mutex
	built   builtState
	builds  atomic.Int64 // snapshots built (for tests)

	closeOnce sync.Once

	// known are the values of the environment variables airlock passes to its
	// servers (knownSecrets): calls that send one ask, and the audit log redacts
	// them. Set once by New.
	known []secrets.Known
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
	store := opts.Pins
	if store == nil {
		store, _ = pins.Open("")
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		cfg:     cfg,
		opts:    opts,
		pins:    store,
		tokens:  oauth.NewStore(cfg.StateDir),
		events:  newQueue(),
		servers: map[string]*server{},
		ctx:     ctx,
		cancel:  cancel,
	}
	eo := approval.Options{Approver: opts.Approver, Events: m.events.push, Timeout: cfg.ApprovalTimeout, Now: opts.Now,
		Limits: cfg.Limits.WithDefaults(), LimitSources: cfg.LimitSources, RulesFile: opts.RulesFile, RulesChanged: m.rulesChanged, Servers: cfg.Servers}
	if !opts.NoHistory {
		m.agentHist = conn.NewAgentHistories(opts.Now)
	}
	m.known = knownSecrets(cfg.Servers, os.LookupEnv)
	eo.Secrets = m.known
	if !opts.MemoryTaint {
		eo.StateDir = cfg.StateDir
	}
	if opts.Audit != nil {
		eo.Record = opts.Audit.Append
	}
	m.engine = approval.New(eo)
	if opts.Audit != nil {
		m.watchAudit()
	}
	m.inflight = map[string]map[string]bool{}
	if m.engine.OwnQueue() {
		m.stale = make(chan struct{}, 1)
		m.OnChange(func() {
			select {
			case m.stale <- struct{}{}:
			default:
			}
		})
		m.wg.Add(1)
		go m.staleLoop()
	}
	for _, sc := range cfg.Servers {
		m.servers[sc.Name] = newServer(m, sc)
		m.order = append(m.order, sc.Name)
	}
	sort.Strings(m.order)
	return m
}

// Now is the Manager's clock (Options.Now).
func (m *Manager) Now() time.Time { return m.opts.Now() }

// Note files one of airlock's own lines under source (for example "gateway") in
// the log that the TUI's Logs view shows, instead of writing it to a terminal that
// the TUI draws on. It never blocks: log lines overflow into a counted drop.
func (m *Manager) Note(source, text string) {
	m.events.push(model.LogLine{Server: source, Source: "airlock", Text: text})
}

// Version is airlock's version as the Manager sends it in initialize.
func (m *Manager) Version() string { return m.opts.Version }

// Config returns the configuration the Manager runs on.
func (m *Manager) Config() *config.Config { return m.cfg }

// Engine returns the approval engine every call goes through.
func (m *Manager) Engine() *approval.Engine { return m.engine }

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
func (m *Manager) Next(ctx context.Context) (model.Event, bool) { return m.events.next(ctx) }

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

// History returns the kept protocol messages of a server, both ways, oldest first
// (raw and server-controlled: escape before display).
func (m *Manager) History(name string) model.History {
	s, ok := m.servers[name]
	if !ok {
		return model.History{Server: name}
	}
	h := s.hist.Snapshot()
	h.Server = name
	return h
}

// AgentHistorySources lists the agent sessions at the gateway whose protocol
// messages are kept: the ended ones kept, oldest first, then the running ones.
func (m *Manager) AgentHistorySources() []model.HistorySource { return m.agentHist.Sources() }

// AgentHistory returns the kept messages of an agent session (key from
// AgentHistorySources), both ways, oldest first (raw and agent-controlled: escape
// before display).
func (m *Manager) AgentHistory(key string) model.History { return m.agentHist.Snapshot(key) }

// Close disconnects every server, stops every child process group, and ends event
// delivery. Close is idempotent and safe for concurrent use.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		m.cancel()
		var wg sync.WaitGroup
		for _, s := range m.servers {
			wg.Add(1)
			go func() { defer wg.Done(); s.disconnect(); s.closeAuthz() }()
		}
		wg.Wait()
		m.wg.Wait()
		m.pins.Close() // after a listing's pins written in the background
		m.engine.Close()
		m.events.close()
	})
	return nil
}

// changed invalidates the cached snapshot and reports the server's new state.
func (m *Manager) changed(name string, gen uint64, st model.Status) {
	m.publish.Lock()
	m.dropSnapshot()
	m.publish.Unlock()
	m.announce(name, gen, st)
}

// dropSnapshot invalidates the cached snapshot.
func (m *Manager) dropSnapshot() {
	m.mu.Lock()
	m.snap = nil
	m.version++
	m.mu.Unlock()
}

// announce reports a server's new state to the UI and every subscriber.
func (m *Manager) announce(name string, gen uint64, st model.Status) {
	m.events.push(model.ServerChanged{Server: name, Gen: gen, Status: st})
	m.notify()
}

// OnChange registers f to run after every change to what a snapshot shows (the
// gateway re-lists what it serves); f must not block.
func (m *Manager) OnChange(f func()) {
	m.subsMu.Lock()
	defer m.subsMu.Unlock()
	m.subs = append(m.subs, f)
}

// OnResourceUpdated registers f to run for every ResourceUpdated the Manager reports
// (the gateway relays it to the agents subscribed); f must not block.
func (m *Manager) OnResourceUpdated(f func(model.ResourceUpdated)) {
	m.subsMu.Lock()
	defer m.subsMu.Unlock()
	m.updatedSubs = append(m.updatedSubs, f)
}

// resourceUpdatedHooks runs the functions OnResourceUpdated registered.
func (m *Manager) resourceUpdatedHooks(ev model.ResourceUpdated) {
	m.subsMu.Lock()
	subs := append([]func(model.ResourceUpdated){}, m.updatedSubs...)
	m.subsMu.Unlock()
	for _, f := range subs {
		f(ev)
	}
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

// ErrTaskRequired is returned by Call, before anything is asked or sent, for a tool
// whose execution.taskSupport is "required": such a tool only runs as a task (the
// SEP-2663 extension), which go-sdk v1.8.0, and so airlock, does not implement.
var ErrTaskRequired = errors.New(`the tool says execution.taskSupport = "required": it only runs as a task (SEP-2663), and airlock cannot run task-augmented calls (go-sdk v1.8.0 does not implement tasks)`)

// ErrArgsSchema is wrapped by Call's error, before anything is decided, asked or
// sent, for an agent's arguments that the tool's input schema does not allow (or a
// schema that cannot be checked); the error names the field.
var ErrArgsSchema = errors.New("the arguments do not match the tool's input schema")

// ErrResultSchema is wrapped by Call's error when the tool declares an output schema
// and the server's result, not a tool error (isError), has no structured content or
// structured content the schema does not allow; the error names the path and what
// was expected ("price: expected number, got string"). The Outcome is returned beside
// it with the result as the server sent it, for the person to see; an agent is given
// the error, never the result. It is model.ErrResultSchema.
var ErrResultSchema = model.ErrResultSchema

// errNotReady is returned by Call when the tool's server is not connected.
var errNotReady = errors.New("server is not ready")

// Outcome is what happened to a call that ran.
type Outcome struct {
	CallID  string
	Verdict trust.Verdict
	// Rule names the argument rule that allowed the call unasked ("NAME
	// (SOURCE)"), "" when none did.
	Rule     string
	Result   *mcp.CallToolResult
	Duration time.Duration
	// Checked says the result was checked against the output schema of the tool
	// the call was decided on, and matched it: false for a tool without one, a
	// tool error (isError, not checked) and a result that did not match
	// (ErrResultSchema). Whoever says a result matches says it from this, not from
	// a definition of the tool it holds, which may be another listing's.
	Checked bool
}

// Call decides req through the approval engine and, when allowed, forwards it with the
// server's call timeout. Cancelling ctx withdraws a pending approval or cancels the
// running call (the server is sent notifications/cancelled). A denial returns a
// *DeniedError.
//
// The arguments are made canonical first (trust.CanonicalArgs): duplicate keys,
// invalid UTF-8, anything but an object, and arguments over the limit are refused
// before anything is asked; what is shown, hashed, audited and sent is the canonical
// bytes. Just before forwarding, the call is checked once more against the newest
// listing (under the lock that publishes listings): if the tool's definition, tier,
// trust or policy changed since it was decided, the call is denied with a sentence
// saying what changed. Every call, even one refused or to an unknown tool, is audited.
// A result is checked against the tool's output schema before it is returned
// (ErrResultSchema).
//
// Arguments that arrive canonical are kept as given, not copied: the caller must not
// change req.Args until Call returns, or what is sent would differ from what was shown.
func (m *Manager) Call(ctx context.Context, req model.CallRequest) (*Outcome, error) {
	start := m.opts.Now()
	// Made canonical once: what is shown, hashed, sent and reported.
	canon, cerr := trust.CanonicalArgs(req.Args, m.engine.Limits().MaxArgsBytes)
	if cerr == nil {
		// Arguments that arrive canonical (most agents send compact JSON in order) are
		// kept as they came, and the received bytes are not held beside their copy
		// while the call waits: one copy of a large argument, not two.
		if bytes.Equal(canon, req.Args) {
			canon = req.Args
		}
		req.Args = canon // what is shown, hashed, sent and reported
	}
	out, err := m.decideAndCall(ctx, req, canon, cerr)
	m.events.push(callFinished(req, m.Snapshot(), start, m.opts.Now(), out, err))
	return out, err
}

// decideAndCall is Call without the CallFinished event; canon and err are
// trust.CanonicalArgs of req.Args.
func (m *Manager) decideAndCall(ctx context.Context, req model.CallRequest, canon []byte, err error) (*Outcome, error) {
	callID := m.callIDOf(req.CallID)
	m.engine.NoteClient(req.Context, req.Client)
	q := trust.Ref{Server: req.Server, Tool: req.Tool}.Qualified()
	s, ok := m.servers[req.Server]
	if !ok {
		err := fmt.Errorf("calling %s: no server %q", q, req.Server)
		m.AuditRefused(callID, req, trust.DecidedByUnknownTool, err.Error())
		return nil, err
	}
	if err != nil {
		err = fmt.Errorf("calling %s: %w", q, err)
		m.AuditRefused(callID, req, trust.DecidedByPolicy, err.Error())
		return nil, err
	}
	req.Args = canon
	tool, ok := m.Snapshot().Tool(req.Server, req.Tool)
	if !ok {
		m.AuditRefused(callID, req, trust.DecidedByUnknownTool, "server "+req.Server+" lists no tool "+strconv.Quote(req.Tool))
		return nil, fmt.Errorf("calling %s: %w", q, ErrNoTool)
	}
	if tool.TaskSupport == "required" {
		// Nothing is asked and nothing is sent: the call could not run anyway.
		err := fmt.Errorf("calling %s: %w", q, ErrTaskRequired)
		m.AuditRefused(callID, req, trust.DecidedByPolicy, err.Error())
		return nil, err
	}
	if req.Context != "" {
		if err := m.argSchemas.Check(tool.InputSchema, req.Args); err != nil {
			// An agent's call is decided on nothing the schema refuses: a lax
			// server would coerce it ("99999999" for a number) after a rule
			// compared it as something else. The person's calls are checked by
			// the same validator where they are made (the call form, `airlock
			// call`), so nothing the schema refuses reaches a decision.
			err = fmt.Errorf("calling %s: %w: %w", q, ErrArgsSchema, err)
			m.AuditRefused(callID, req, trust.DecidedByPolicy, err.Error())
			return nil, err
		}
	}
	base := m.auditBase(callID, req, tool)
	d, err := m.engine.Authorize(ctx, callID, req, tool, s.local())
	if err != nil {
		_ = m.auditDecision(base, d)
		return nil, &model.WithdrawnError{Verdict: d.Verdict, Err: err}
	}
	if d.Verdict.Action == trust.Allow {
		d, _ = m.recheck(ctx, req, tool, d)
	}
	if d.Verdict.Action != trust.Allow {
		_ = m.auditDecision(base, d)
		return nil, &model.DeniedError{Verdict: d.Verdict, Reason: d.PersonReason, Rule: d.Rule}
	}
	// The approved call's record is on disk before the call is forwarded.
	if err := m.auditDecision(base, d); err != nil {
		denied := trust.Verdict{Action: trust.Deny, By: trust.DecidedByPolicy, Reasons: append(d.Verdict.Reasons, "the audit log cannot be written, so the call is denied: "+err.Error())}
		return nil, &model.DeniedError{Verdict: denied, Audit: err}
	}
	// A listing's pins are written in the background (setTools); nothing is forwarded
	// before they are on disk, or their write has failed and been reported.
	m.pins.WaitSaved()
	// The call's progress is routed from before its last look: nothing that takes
	// a lock others hold (the engine's, here) comes between the last look and the
	// forwarding.
	progress := m.engine.WatchProgress(callID, req, tool)
	defer m.engine.UnwatchProgress(progress)
	if err := m.lastLook(ctx, req, tool, d); err != nil {
		m.auditOutcome(base, &Outcome{CallID: callID, Verdict: d.Verdict, Rule: d.Rule}, err)
		return nil, err
	}
	start := m.opts.Now()
	m.callStarted(req.Server, callID)
	res, err := s.call(ctx, req, progress)
	m.callEnded(req.Server, callID)
	checked := false
	if err == nil {
		checked, err = m.checkResult(q, tool, res)
	}
	out := &Outcome{CallID: callID, Verdict: d.Verdict, Rule: d.Rule, Result: res, Duration: m.opts.Now().Sub(start), Checked: checked}
	m.auditOutcome(base, out, err)
	if err != nil {
		// An error's text may be the server's own words (a JSON-RPC error message),
		// and it is handed on: it taints like a result, unless the caller withdrew.
		if trust.Taints(tool.Class) && ctx.Err() == nil {
			m.engine.MarkTainted(req.Context, trust.Taint{By: tool.Ref, CallID: callID, At: m.opts.Now(), Channel: trust.ChannelError})
		}
		return out, err
	}
	if trust.Taints(tool.Class) {
		m.engine.MarkTainted(req.Context, trust.Taint{By: tool.Ref, CallID: callID, At: m.opts.Now(), Channel: trust.ChannelResult})
	}
	return out, nil
}

// checkResult checks a result against the output schema of the tool it was decided
// on, as the MCP spec says a client should. A tool without one checks nothing, and
// neither does a tool error (isError): the spec asks conforming structured results of
// a tool that succeeded, and an error result reports a failure, not the result the
// schema describes (the TypeScript SDK's client skips it too). It reports whether
// the result was checked and matched (Outcome.Checked).
func (m *Manager) checkResult(q string, tool model.ToolInfo, res *mcp.CallToolResult) (matched bool, err error) {
	if res == nil || res.IsError || len(tool.OutputSchema) == 0 {
		return false, nil // most tools declare none: not even the cache's lock
	}
	if string(bytes.TrimSpace(tool.OutputSchema)) == "null" {
		return false, nil // no schema after all
	}
	if err := m.argSchemas.CheckResult(tool.OutputSchema, res.StructuredContent); err != nil {
		return false, fmt.Errorf("calling %s: %w: %w", q, ErrResultSchema, err)
	}
	return true, nil
}

// recheck is the look at an allowed call before its decision is recorded, under the
// read side of the lock every listing is published under: the caller must still be
// there (an agent that went away, or withdrew the call, as the person allowed it
// gets nothing run for it) and the tool must be what the decision was about
// (ToolChanges). After a question, the answer is refused too when the agent's token
// is no longer accepted, a context that became tainted meanwhile reaches a tool
// taint escalates, or a deny rule matches now. It returns the denial and false when
// the call must not run. lastLook looks at all of it again once the record is
// written.
func (m *Manager) recheck(ctx context.Context, req model.CallRequest, shown model.ToolInfo, d approval.Decision) (approval.Decision, bool) {
	v, rule, ok := m.recheckVerdict(ctx, req, shown, d, false)
	if ok {
		return d, true
	}
	return deniedAtRecheck(d, v, rule), false
}

// deniedAtRecheck is d denied by a recheck's verdict v and the deny rule that
// decided it (nil when none did).
func deniedAtRecheck(d approval.Decision, v trust.Verdict, rule *trust.Rule) approval.Decision {
	out := approval.Decision{Verdict: v, Matched: d.Matched}
	if rule != nil {
		// The rule that refused it now, not the one (if any) that made it ask.
		out.Rule, out.Matched = rule.Label(), rule.Name
	}
	return out
}

// recheckVerdict is recheck's verdict, with the deny rule that decided it (nil when
// none did). recorded says the call's allow is on record already (lastLook): then
// the rules and the taint are looked at for every call, the token has been looked
// at by the caller, and the reasons say the call was allowed before it was stopped.
// Before the record, a call nobody was asked about was decided on the rules and the
// taint microseconds ago, and is not looked at again until after its record.
func (m *Manager) recheckVerdict(ctx context.Context, req model.CallRequest, shown model.ToolInfo, d approval.Decision, recorded bool) (trust.Verdict, *trust.Rule, bool) {
	m.publish.RLock()
	defer m.publish.RUnlock()
	while := "the call was being decided"
	switch {
	case recorded:
		while = "its allow was being recorded"
	case d.Asked:
		while = "you were deciding"
	}
	notRun := ", so the call was not forwarded"
	if !recorded && req.StillAccepted != nil && d.Asked {
		// After a question the answer is refused as the decision. A call nobody
		// was asked about is looked at once, after its record (lastLook).
		if err := req.StillAccepted(); err != nil {
			by := trust.DecidedByPolicy
			if errors.Is(err, model.ErrAgentGone) {
				by = trust.DecidedByAgentGone
			}
			return trust.Verdict{Action: trust.Deny, By: by, Reasons: []string{err.Error() + " while " + while + notRun}}, nil, false
		}
	}
	if !recorded {
		switch {
		case approval.AgentGone(ctx):
			return trust.Verdict{Action: trust.Deny, By: trust.DecidedByAgentGone, Reasons: []string{approval.GoneWhy(ctx) + " while " + while + notRun}}, nil, false
		case ctx.Err() != nil:
			return trust.Verdict{Action: trust.Deny, By: trust.DecidedByAgentCancelled, Reasons: []string{"the caller withdrew the call while " + while + ", so it was not forwarded"}}, nil, false
		}
	}
	because := d.Because
	if recorded {
		// After the record the sentence of the question is on record already.
		because = func(s string) []string { return []string{s + notRun} }
	}
	now, ok := m.LookupTool(m.Snapshot(), req.Server, req.Tool)
	if !ok {
		return trust.Verdict{Action: trust.Deny, By: trust.DecidedByPolicy, Reasons: because(approval.ChangedSentence(shown.Ref, while, []string{"it is no longer listed"}))}, nil, false
	}
	if changes := approval.ToolChanges(shown, now); len(changes) > 0 {
		return trust.Verdict{Action: trust.Deny, By: approval.ChangedBy(shown, now), Reasons: because(approval.ChangedSentence(shown.Ref, while, changes))}, nil, false
	}
	if d.Asked {
		if t := m.engine.Taint(req.Context); t.Tainted() && !d.Shown.Tainted() && trust.EscalatedByTaint(now.Class) {
			return trust.Verdict{Action: trust.Deny, By: trust.DecidedByPolicy, Reasons: because("this context became tainted while " + while + " (" + t.Reason() + ")")}, nil, false
		}
	} else if !recorded {
		return d.Verdict, nil, true
	}
	v, rule := m.engine.RecheckCall(req.Context, now, req.Args, m.servers[req.Server].local())
	if v.Action == trust.Deny && v.By == trust.DecidedByRule {
		// A matching deny is final, over the person's answer too: a path the
		// question showed may have become a link into what a deny rule protects
		// while it waited (the rules also change: a deny saved meanwhile).
		if recorded {
			v.Reasons = append([]string{"rule " + rule.Label() + " matches the call now and denies it, checked again after its allow was recorded (a deny saved meanwhile, or a path in it that changed)" + notRun}, v.Reasons...)
		} else {
			v.Reasons = append(v.Reasons, "checked again just before forwarding, a deny rule matches the call now (a path in it may have changed while "+while+")")
		}
		return v, rule, false
	}
	if d.Asked || v.Action == trust.Allow {
		// What a person allowed is not stopped by a rule or a policy that would
		// only ask now.
		return d.Verdict, nil, true
	}
	v.Action, v.By = trust.Deny, trust.DecidedByPolicy
	v.Reasons = append(v.Reasons, "checked again after its allow was recorded, the call no longer runs unasked"+notRun+"; call again")
	return v, nil, false
}

// notForwarded is the error of an allowed call whose caller left after recheck (while
// its decision was written to disk), or nil: such a call is not forwarded either, and
// its outcome record says so.
func notForwarded(ctx context.Context) *model.WithdrawnError {
	switch {
	case approval.AgentGone(ctx):
		return &model.WithdrawnError{Err: model.ErrAgentGone, Verdict: trust.Verdict{Action: trust.Deny, By: trust.DecidedByAgentGone,
			Reasons: []string{approval.GoneWhy(ctx) + " after the call was allowed, so it was not forwarded"}}}
	case ctx.Err() != nil:
		return &model.WithdrawnError{Err: ctx.Err(), Verdict: trust.Verdict{Action: trust.Deny, By: trust.DecidedByAgentCancelled,
			Reasons: []string{"the caller withdrew the call after it was allowed, so it was not forwarded"}}}
	}
	return nil
}

// lastLook is the error of an allowed call that must not be forwarded after all,
// asked after its decision's record was written, the last moment before forwarding
// (a record can wait for another airlock appending, or a slow disk): its caller left
// (notForwarded), its StillAccepted refuses it (a revoked or rotated gateway token),
// or what it was decided on changed meanwhile (recheckVerdict: the tool's
// definition, a deny rule, the context's taint, a grant). nil: forward it. A change
// is a *model.DeniedError whose verdict says the call was allowed first; the allow
// stays on record, and the outcome's record says why nothing ran.
func (m *Manager) lastLook(ctx context.Context, req model.CallRequest, shown model.ToolInfo, d approval.Decision) error {
	// The checks that take locks others hold (the publish lock, the engine's)
	// come first, the caller and its token last: nothing that waits stands
	// between those and the forwarding.
	if v, rule, ok := m.recheckVerdict(ctx, req, shown, d, true); !ok {
		out := deniedAtRecheck(d, v, rule)
		return &model.DeniedError{Verdict: out.Verdict, Rule: out.Rule}
	}
	if w := withdrawnAtLastLook(ctx, req); w != nil {
		return w
	}
	return nil
}

// withdrawnAtLastLook is lastLook's look at the caller: gone, withdrawn, or its
// token no longer accepted.
func withdrawnAtLastLook(ctx context.Context, req model.CallRequest) *model.WithdrawnError {
	if w := notForwarded(ctx); w != nil || req.StillAccepted == nil {
		return w
	}
	err := req.StillAccepted()
	if err == nil {
		return nil
	}
	by := trust.DecidedByPolicy
	if errors.Is(err, model.ErrAgentGone) {
		by = trust.DecidedByAgentGone
	}
	return &model.WithdrawnError{Err: err, Verdict: trust.Verdict{Action: trust.Deny, By: by,
		Reasons: []string{err.Error() + " after the call was allowed, so it was not forwarded"}}}
}

// staleLoop withdraws waiting questions whose tool changed under them, so an open
// dialog never keeps showing a tier or a definition that is no longer true.
func (m *Manager) staleLoop() {
	defer m.wg.Done()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-m.stale:
		}
		pending := m.engine.Pending()
		if len(pending) == 0 {
			continue
		}
		snap := m.Snapshot()
		for _, p := range pending {
			now, ok := m.LookupTool(snap, p.Tool.Ref.Server, p.Tool.Ref.Tool)
			m.engine.WithdrawChanged(p, now, ok)
		}
	}
}

// callIDOf is the ID a caller gave its call, else a new one.
func (m *Manager) callIDOf(given string) string {
	if given != "" {
		return given
	}
	return m.engine.NewCallID()
}

func (m *Manager) callStarted(server, callID string) {
	m.inflightMu.Lock()
	defer m.inflightMu.Unlock()
	if m.inflight[server] == nil {
		m.inflight[server] = map[string]bool{}
	}
	m.inflight[server][callID] = true
}

func (m *Manager) callEnded(server, callID string) {
	m.inflightMu.Lock()
	defer m.inflightMu.Unlock()
	delete(m.inflight[server], callID)
}

// inFlight lists the calls forwarded to a server that have not returned, sorted.
func (m *Manager) inFlight(server string) []string {
	m.inflightMu.Lock()
	defer m.inflightMu.Unlock()
	out := make([]string, 0, len(m.inflight[server]))
	for id := range m.inflight[server] {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// auditBase is what every record of one call shares, or nil when no audit log is
// configured (then nothing is hashed or redacted at all).
func (m *Manager) auditBase(callID string, req model.CallRequest, tool model.ToolInfo) *audit.Record {
	if m.opts.Audit == nil {
		return nil
	}
	return &audit.Record{
		CallID:     callID,
		Context:    approval.ContextKey(req.Context),
		Client:     req.Client,
		Server:     req.Server,
		Tool:       req.Tool,
		Served:     servedName(req),
		Tier:       tool.Class.Tier.String(),
		ArgsSHA256: trust.ArgsSHA256(req.Args),
		Args:       secrets.RedactWith(req.Args, m.known),
	}
}

// AuditRefused records a call refused before it could be decided: an unknown server
// or tool, or arguments that are not canonical JSON. The arguments are not kept (they
// may not be JSON); their hash is.
func (m *Manager) AuditRefused(callID string, req model.CallRequest, by trust.DecidedBy, why string) {
	if m.opts.Audit == nil {
		return
	}
	r := audit.Record{Kind: "decision", CallID: callID, Context: approval.ContextKey(req.Context), Client: req.Client, Server: req.Server, Tool: req.Tool, Served: servedName(req),
		ArgsSHA256: trust.ArgsSHA256(req.Args), Decision: "deny", DecidedBy: string(by), Reason: why, TS: m.opts.Now().UTC()}
	_ = m.opts.Audit.Append(r)
}

// auditDecision records how a call was decided, with the deciding sentences; it
// fails only when the log cannot be written.
func (m *Manager) auditDecision(base *audit.Record, d approval.Decision) error {
	if base == nil {
		return nil
	}
	v := d.Verdict
	r := *base
	r.Kind, r.Decision, r.DecidedBy, r.Reason, r.PersonReason, r.Rule = "decision", "deny", string(v.By), strings.Join(v.Reasons, "; "), d.PersonReason, d.Matched
	if v.Action == trust.Allow {
		r.Decision = "allow"
	}
	r.TS = m.opts.Now().UTC()
	return m.opts.Audit.AppendDecision(r)
}

// auditOutcome records how a forwarded call ended (best effort: the call already ran).
func (m *Manager) auditOutcome(base *audit.Record, out *Outcome, err error) {
	if base == nil {
		return
	}
	r := *base
	r.Kind, r.DurationMS = "outcome", out.Duration.Milliseconds()
	switch {
	case errors.Is(err, ErrCallTimeout):
		r.Outcome, r.Error = "timeout", err.Error()
	case errors.Is(err, ErrResultSchema):
		r.Outcome, r.Error = "result-invalid", err.Error()
	case err != nil:
		r.Outcome, r.Error = "failed", err.Error()
	case out.Result.IsError:
		r.Outcome = "tool-error"
	default:
		r.Outcome = "ok"
	}
	r.TS = m.opts.Now().UTC()
	// Written, not waited for on disk: the next decision's sync carries it (see
	// Audit.AppendUnsynced and docs/audit-durability.md).
	_ = m.opts.Audit.AppendUnsynced(r)
}

// servedName is r.Served when it differs from the qualified name, else "".
func servedName(r model.CallRequest) string {
	if r.Served == "" || r.Served == (trust.Ref{Server: r.Server, Tool: r.Tool}).Qualified() {
		return ""
	}
	return r.Served
}
