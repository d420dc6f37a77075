package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

// MinBodyLimit is the least bound on one request body an agent may send the
// gateway; the bound is raised to [limits] max_args_bytes plus 64 KiB of envelope
// when that is larger (Gateway.MaxBody).
const MinBodyLimit = 4 << 20

// Options configures the agent gateway.
type Options struct {
	// Listen is host:port; the host must be loopback unless AllowRemote.
	Listen      string
	AllowRemote bool
	// Token is the bearer token agents must present (see LoadOrCreateToken).
	Token string
	// TokenFile, when set, is the file Token came from: the gateway follows it, so
	// `airlock gateway rotate-token` takes effect on the next request.
	TokenFile string
	// TokensFile, when set, is the named agent tokens file (TokensPath): the gateway
	// follows it, accepting a token added by another process from its next request
	// and ending a revoked token's sessions within RevokeEvery. Without it only the
	// default token (Token) is accepted.
	TokensFile string
	// RevokeEvery is how often the gateway looks for revoked tokens when no request
	// made it look (default 500ms; at most 1s).
	RevokeEvery time.Duration
	// WaitingEvery is how often an agent that sent a progress token is told its call
	// still waits for a person (default 5s).
	WaitingEvery time.Duration
	// ReadHeaderTimeout bounds reading a request's headers (default 10s), IdleTimeout
	// how long a keep-alive connection may wait for its next request (default 2m).
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	// SessionIdleTimeout, when above zero, ends an agent session with nothing in
	// flight for this long: no request, none waiting for a person, and no event
	// stream open (sessionLife, gatewaylife.go). So an agent that vanished without
	// ending its session does not keep it, with its goroutines and buffers, for as
	// long as airlock runs, while an agent that only thinks with its stream open keeps
	// it however long it thinks. Its taint and grants belong to who it is, not to the
	// session, so ending one loses no state. Zero keeps sessions until they end.
	SessionIdleTimeout time.Duration
	// WriteTimeout bounds each write of a response (default 30s): a client that stops
	// reading is cut off. It is renewed before every write, so a response that waits
	// minutes for a person, or an event stream that stays open, is never cut for
	// taking long; http.Server.WriteTimeout would cut both.
	WriteTimeout time.Duration
	// MaxSubscriptions bounds the resources one agent session may subscribe to
	// (default MaxAgentSubscriptions).
	MaxSubscriptions int
	// BodyReadTimeout bounds reading one request's body (default 30s); a client
	// that trickles its body is cut off.
	BodyReadTimeout time.Duration
	// MaxConns bounds the connections the gateway holds at once (default
	// DefaultMaxConns, and always below the process's descriptor limit with room
	// for servers' pipes); MaxConnsPerClient those from one remote address
	// (default DefaultMaxConnsPerClient). See connlimit.go.
	MaxConns          int
	MaxConnsPerClient int
	// Log receives the gateway's own notes (connections refused or closed at the
	// limits), one line each, at most one every few seconds; nil writes them to
	// the standard logger (stderr).
	Log func(string)
}

// Gateway serves every tool that is not blocked to AI agents over streamable HTTP, as
// SERVER__TOOL or, where that is no name every agent client accepts, the name
// Snapshot.ServedName maps it to, with the effective annotations; every call goes through the Manager's
// approval engine, in a taint context of its own per agent session. Resources,
// templates and prompts are relayed too (relay.go). Construct it with
// New, start it with Start, stop it with Close.
type Gateway struct {
	m     Host
	opts  Options
	srv   *mcp.Server
	token *tokenSource
	named *namedTokens // the named agent tokens (tokens.go)

	owners *owners // which token opened each agent session

	seenMu sync.Mutex
	seen   map[string][32]byte // each token's value (SHA-256) as endRevoked last saw it

	closingMu sync.Mutex
	closing   map[string]bool // ended sessions whose Close has not returned (closeEnded)

	tokensChanged chan struct{} // a request saw the tokens file change
	tokensNoteMu  sync.Mutex
	tokensNote    string // the tokens file's problem last noted

	mu      sync.Mutex
	exposed map[string]gatewayTool // served name -> what is registered
	skipped []string
	ended   map[string]bool // agent sessions already watched for their end

	resync chan struct{}
	done   chan struct{}
	wg     sync.WaitGroup

	// inflight counts the bytes of large request bodies being read, decoded or
	// waiting (a call that waits for a person holds its body's bytes); refuseMu lets
	// one refused body at a time be read for its request id.
	inflightMu sync.Mutex
	inflight   int64
	refuseMu   sync.Mutex

	relay relayed // resources, templates and prompts served (relay.go); mu guards it

	life *sessionLife // ends unused agent sessions; nil without SessionIdleTimeout

	requesters *requesters // who is still there for each agent call (gatewaylife.go)

	ln      net.Listener
	conns   *connLimiter
	httpSrv *http.Server
	url     string
	allowed map[string]bool // host names (without port) agents may use in Host and Origin
}

type gatewayTool struct {
	ref trust.Ref
	key string // changes when anything the agent sees of the tool changes
}

// New builds a gateway over m. It serves nothing until Start.
func New(m Host, opts Options) (*Gateway, error) {
	if opts.Token == "" {
		return nil, errors.New("gateway: no token")
	}
	if opts.WaitingEvery <= 0 {
		opts.WaitingEvery = 5 * time.Second
	}
	if opts.ReadHeaderTimeout <= 0 {
		opts.ReadHeaderTimeout = 10 * time.Second
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 2 * time.Minute
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 30 * time.Second
	}
	if opts.MaxSubscriptions <= 0 {
		opts.MaxSubscriptions = MaxAgentSubscriptions
	}
	if opts.BodyReadTimeout <= 0 {
		opts.BodyReadTimeout = 30 * time.Second
	}
	if opts.RevokeEvery <= 0 || opts.RevokeEvery > time.Second {
		opts.RevokeEvery = 500 * time.Millisecond
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	opts.MaxConns = connBound(opts.MaxConns, fdLimit())
	if opts.MaxConnsPerClient <= 0 {
		opts.MaxConnsPerClient = DefaultMaxConnsPerClient
	}
	opts.MaxConnsPerClient = min(opts.MaxConnsPerClient, opts.MaxConns)
	host, _, err := net.SplitHostPort(opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("gateway listen %q: %w", opts.Listen, err)
	}
	if !opts.AllowRemote && !isLoopbackHost(host) {
		return nil, fmt.Errorf("gateway listen %q: not a loopback address (set allow_remote to serve other hosts)", opts.Listen)
	}
	g := &Gateway{
		m:      m,
		opts:   opts,
		token:  newTokenSource(opts.TokenFile, opts.Token),
		named:  newNamedTokens(opts.TokensFile),
		owners: newOwners(),

		tokensChanged: make(chan struct{}, 1),
		exposed:       map[string]gatewayTool{},
		ended:         map[string]bool{},
		resync:        make(chan struct{}, 1),
		done:          make(chan struct{}),
		relay:         newRelayed(),

		requesters: newRequesters(),
	}
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	relayCapabilities(caps)
	g.srv = mcp.NewServer(&mcp.Implementation{Name: "airlock-gateway", Title: "airlock", Version: m.Version()}, &mcp.ServerOptions{
		Instructions:       "airlock relays the tools, resources and prompts of the servers it is connected to. Resource URIs are airlock://SERVER/URI (or airlock://SERVER?ESCAPED-URI): read them as listed or linked. A person approves risky calls and reads; a denied one returns an error that says why.",
		Capabilities:       caps,
		CompletionHandler:  g.completeHandler,
		SubscribeHandler:   g.subscribeHandler,
		UnsubscribeHandler: g.unsubscribeHandler,
	})
	g.srv.AddReceivingMiddleware(g.boundToRequester, g.auditUnknownTools, g.listingTaint, g.relayMiddleware)
	return g, nil
}

// auditUnknownTools records an agent's call to a tool the gateway does not serve (go-sdk
// answers it with an error before any handler runs): the audit log keeps every call.
func (g *Gateway) auditUnknownTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				g.mu.Lock()
				_, served := g.exposed[r.Params.Name]
				g.mu.Unlock()
				if !served {
					ctxName, client, _ := g.agentOf(r.Session)
					g.m.AuditRefused(g.m.NewCallID(), model.CallRequest{Context: ctxName, Client: client,
						Tool: r.Params.Name, Args: r.Params.Arguments}, trust.DecidedByUnknownTool,
						"the gateway serves no tool "+strconv.Quote(r.Params.Name)+g.servedAs(r.Params.Name))
				}
			}
		}
		return next(ctx, method, req)
	}
}

// listingTaint taints an agent's context when a tool listing served to it holds a
// tool, from a server the person has not marked trusted, whose text names another
// server's tool (a shadowing hazard): that text reaches the agent by listing alone,
// before any call. The taint is set before the listing is sent. Other listing text
// does not taint (docs/evidence.md says why).
func (g *Gateway) listingTaint(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		lr, ok := res.(*mcp.ListToolsResult)
		ss, ok2 := req.GetSession().(*mcp.ServerSession)
		if !ok || !ok2 {
			return res, err
		}
		snap := g.m.Snapshot()
		shadowing := map[string]bool{}
		for _, h := range snap.Hazards {
			if h.Kind == trust.HazardShadowing {
				for _, q := range h.Legs[trust.HazardLegShadowing] {
					shadowing[q] = true
				}
			}
		}
		if len(shadowing) == 0 {
			return res, err
		}
		listed := make(map[string]bool, len(lr.Tools))
		for _, t := range lr.Tools {
			listed[t.Name] = true
		}
		// The snapshot, not the gateway's own registry: no gateway lock is taken while
		// go-sdk serves a request.
		for _, ti := range snap.Tools {
			if !shadowing[ti.Ref.Qualified()] || ti.ServerTrust == trust.Trusted {
				continue
			}
			if served, ok := snap.ServedName(ti); !ok || !listed[served] {
				continue
			}
			ctxName, _, _ := g.agentOf(ss) // a session no token is known for is refused every call
			g.watchSession(ss, ctxName)
			g.m.MarkTainted(ctxName, trust.Taint{By: ti.Ref, At: g.m.Now(), Channel: trust.ChannelListing})
			break
		}
		return res, err
	}
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Start listens, registers the current tools and keeps them in step with the session.
func (g *Gateway) Start() error {
	ln, err := net.Listen("tcp", g.opts.Listen)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	g.conns = newConnLimiter(g.opts.MaxConns, g.opts.MaxConnsPerClient, g.opts.Log)
	g.ln = limitedListener{Listener: ln, l: g.conns}
	// Hosts are checked by name, whatever the port: DNS rebinding hands the browser
	// a foreign name, and a port forward must keep working.
	g.allowed = map[string]bool{"127.0.0.1": true, "localhost": true, "::1": true}
	if g.opts.AllowRemote {
		host, _, _ := net.SplitHostPort(g.opts.Listen)
		g.allowed[strings.ToLower(host)] = true
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	g.url = "http://" + net.JoinHostPort(host, port) + "/mcp"
	g.sync()
	g.m.OnChange(func() {
		select {
		case g.resync <- struct{}{}:
		default:
		}
	})
	g.m.OnResourceUpdated(g.resourceUpdated)
	g.adoptLegacyTaints()
	g.named.refresh()
	g.noteTokensProblem()
	g.seenMu.Lock()
	g.seen = g.currentTokens()
	g.seenMu.Unlock()
	g.wg.Add(3)
	go g.syncLoop()
	go g.updateLoop()
	go g.revokeLoop()
	if g.opts.SessionIdleTimeout > 0 {
		g.life = newSessionLife(g.opts.SessionIdleTimeout, time.Now)
		g.wg.Add(1)
		go g.lifeLoop()
	}
	g.httpSrv = &http.Server{
		Handler:           writeDeadlines(g.Handler(), g.opts.WriteTimeout),
		ReadHeaderTimeout: g.opts.ReadHeaderTimeout,
		IdleTimeout:       g.opts.IdleTimeout,
		ConnContext:       withConn,
		// An agent's headers are a few hundred bytes; net/http's default of 1 MiB
		// would let each of thousands of clients without a token hold a megabyte.
		MaxHeaderBytes: maxHeaderBytes,
		// No ReadTimeout or WriteTimeout: either would end a response that waits for
		// a person or an open event stream (a read deadline that passes while a
		// handler runs cancels its request). Each write has its own deadline instead.
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		_ = g.httpSrv.Serve(g.ln)
	}()
	return nil
}

// URL is the agent-facing endpoint, http://HOST:PORT/mcp.
func (g *Gateway) URL() string { return g.url }

// OpenSessions is how many agent sessions the gateway holds open now.
func (g *Gateway) OpenSessions() int {
	n := 0
	for range g.srv.Sessions() {
		n++
	}
	return n
}

// Skipped lists the tools not offered to agents and why (bad names, schemas an MCP
// server cannot serve).
func (g *Gateway) Skipped() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.skipped...)
}

// Close stops serving and waits for the gateway's goroutines. Close is idempotent.
func (g *Gateway) Close() error {
	select {
	case <-g.done:
		return nil
	default:
	}
	close(g.done)
	var err error
	if g.httpSrv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = g.httpSrv.Shutdown(ctx)
		cancel()
		if err != nil {
			err = g.httpSrv.Close()
		}
	}
	g.wg.Wait()
	return err
}

// syncLoop syncs the served tool set each time a resync is asked for, until Close.
func (g *Gateway) syncLoop() { g.loop(0, g.resync, func(bool) { g.sync() }) }

// loop is the body of each of the gateway's background goroutines (one of g.wg's):
// until Close it calls f with true every every (never when every is 0), and with
// false each time wake has a value (never when wake is nil).
func (g *Gateway) loop(every time.Duration, wake <-chan struct{}, f func(ticked bool)) {
	defer g.wg.Done()
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-g.done:
			return
		case <-tick:
			f(true)
		case <-wake:
			f(false)
		}
	}
}

// sync makes the served tool set match the session: tools that are blocked, gone or
// unnamable are removed, new or changed ones (re)added. go-sdk tells connected agents
// with notifications/tools/list_changed.
func (g *Gateway) sync() {
	snap := g.m.Snapshot()
	g.mu.Lock()
	defer g.mu.Unlock()
	want := map[string]bool{}
	var skipped []string
	for _, ti := range snap.Tools {
		q := ti.Ref.Qualified()
		if ti.Class.Tier == trust.TierBlocked {
			continue
		}
		if !ti.Exposed {
			skipped = append(skipped, q+": name cannot be served to agents")
			continue
		}
		served, ok := snap.ServedName(ti)
		if !ok {
			skipped = append(skipped, q+": every name within the name budget it could be served under is another tool's")
			continue
		}
		// The qualified name is in the key: a served name that now stands for
		// another tool is registered again, with that tool's handler.
		key := q + "|" + toolKey(ti)
		want[served] = true
		if old, ok := g.exposed[served]; ok && old.key == key {
			continue
		}
		tool, err := agentTool(ti, served)
		if err == nil {
			err = g.addTool(tool, ti.Ref, served)
		}
		if err != nil {
			delete(want, served)
			skipped = append(skipped, q+": "+err.Error())
			if _, ok := g.exposed[served]; ok {
				g.srv.RemoveTools(served)
				delete(g.exposed, served)
			}
			continue
		}
		g.exposed[served] = gatewayTool{ref: ti.Ref, key: key}
	}
	skipped = append(skipped, g.syncRelay(snap)...)
	var gone []string
	for q := range g.exposed {
		if !want[q] {
			gone = append(gone, q)
		}
	}
	if len(gone) > 0 {
		sort.Strings(gone)
		g.srv.RemoveTools(gone...)
		for _, q := range gone {
			delete(g.exposed, q)
		}
	}
	g.skipped = skipped
}

// toolKey changes when anything the agent sees of a tool changes: its definition (the
// fingerprint the listing already computed; the raw bytes when there is none) or its
// effective annotations.
func toolKey(ti *model.ToolInfo) string {
	def := ti.Fingerprint
	if def == "" {
		def = string(ti.Raw)
	}
	return fmt.Sprintf("%s|%v|%v", def, ti.Class.Effective, ti.Class.Tier)
}

// agentTool is the tool as agents see it, under its served name: the server's
// schemas unmodified, the effective annotations (what airlock acts on), not the
// declared ones.
func agentTool(ti *model.ToolInfo, served string) (*mcp.Tool, error) {
	var obj struct {
		Type any `json:"type"`
	}
	if len(ti.InputSchema) == 0 || json.Unmarshal(ti.InputSchema, &obj) != nil || obj.Type != "object" {
		return nil, errors.New(`input schema is not of type "object", which MCP requires`)
	}
	eff := agentHints(ti.Class)
	t := &mcp.Tool{
		Name:        served,
		Title:       ti.Title,
		Description: ti.Description,
		InputSchema: ti.InputSchema,
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    eff.ReadOnly,
			DestructiveHint: &eff.Destructive,
			IdempotentHint:  eff.Idempotent,
			OpenWorldHint:   &eff.OpenWorld,
			Title:           ti.Title,
		},
	}
	if len(ti.OutputSchema) > 0 && !bytes.Equal(bytes.TrimSpace(ti.OutputSchema), []byte("null")) {
		t.OutputSchema = ti.OutputSchema
	}
	return t, nil
}

// agentHints are the hints an agent is served: the effective ones made coherent with
// the tier airlock acts on. The spec gives an absent destructiveHint the default true
// and says it means nothing for a read-only tool, so a read-only tool's effective hints
// say "read-only and destructive"; an agent that reads both must not be told that. A
// read-only tool is served as not destructive and idempotent (a read has no effect to
// repeat); a write tool as neither read-only nor destructive; a destructive tool as
// destructive and not read-only. Open world is the effective value.
func agentHints(c trust.Classification) trust.Effective {
	e := c.Effective
	switch trust.TierOf(e) {
	case trust.TierRead:
		e.ReadOnly, e.Destructive, e.Idempotent = true, false, true
	case trust.TierWrite:
		e.ReadOnly, e.Destructive = false, false
	default:
		e.ReadOnly, e.Destructive = false, true
	}
	return e
}

// addTool registers a tool; go-sdk panics on schemas it cannot serve, which must not
// take the gateway down, so a panic becomes an error for that tool alone.
func (g *Gateway) addTool(t *mcp.Tool, ref trust.Ref, served string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot be served: %v", r)
		}
	}()
	g.srv.AddTool(t, g.handler(ref, served))
	return nil
}

// servedAs is, for the qualified name of a tool the gateway serves under another
// name, a clause saying which: an agent that calls a tool by its original long or
// dotted name is refused, and the audit says what it should have called.
func (g *Gateway) servedAs(name string) string {
	server, tool, ok := strings.Cut(name, "__")
	if !ok {
		return ""
	}
	snap := g.m.Snapshot()
	ti, ok := snap.Tool(server, tool)
	if !ok {
		return ""
	}
	if served, ok := snap.ServedName(&ti); ok && served != name {
		return " (it serves that tool as " + strconv.Quote(served) + ")"
	}
	return ""
}

// handler forwards one agent call through the approval engine; served is the name
// the agent called it by.
func (g *Gateway) handler(ref trust.Ref, served string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_ = growStack()
		ss := req.Session
		ctxName, client, err := g.acceptedAgent(ctx, ss)
		if err != nil {
			return errorResult("airlock denied this call: " + err.Error()), nil
		}
		token := req.Params.GetProgressToken()
		call := model.CallRequest{Context: ctxName, Client: client, Server: ref.Server, Tool: ref.Tool, Served: served, Args: req.Params.Arguments, CallID: g.m.NewCallID(),
			StillAccepted: g.stillAccepted(ss)}
		// The call holds the arguments from here: go-sdk's request does not keep a
		// second reference to them alive while the call waits for a person.
		req.Params.Arguments = nil
		var stopWaiting func()
		if token != nil {
			var mu sync.Mutex
			var last float64
			notify := func(p *mcp.ProgressNotificationParams) {
				mu.Lock()
				defer mu.Unlock()
				// Progress must increase with every notification (MCP spec), and the
				// waiting notices carry none of their own: step past the last value.
				p.Progress = max(p.Progress, last+1)
				last = p.Progress
				p.ProgressToken = token
				_ = ss.NotifyProgress(ctx, p)
			}
			call.OnProgress = func(p model.Progress) {
				// The message is the server's text: said to come from it, and escaped.
				msg := p.Message
				if msg != "" {
					msg = p.Server + ": " + agentText(msg)
				}
				notify(&mcp.ProgressNotificationParams{Progress: p.Progress, Total: p.Total, Message: msg})
			}
			stopWaiting = g.tellWaiting(ctx, ref.Server, call.CallID, served, func(msg string) {
				notify(&mcp.ProgressNotificationParams{Message: msg})
			})
		}
		out, err := g.m.CallTool(ctx, call)
		if stopWaiting != nil {
			stopWaiting()
		}
		var denied *model.DeniedError
		switch {
		case errors.As(err, &denied):
			return errorResult("airlock denied this call: " + denied.Error()), nil
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, model.ErrResultSchema):
			// A tool error, not a JSON-RPC error: agents hand its text to the
			// model as the call's failure. It carries no structured content, which
			// a client that checks the served output schema accepts for an error.
			return errorResult("airlock withheld the tool's result: " + agentText(err.Error())), nil
		case err != nil:
			return errorResult("airlock could not complete this call: " + agentText(err.Error())), nil
		}
		return relayResult(ref.Server, out), nil
	}
}

// relayResult is a server's tool result as an agent gets it: resource links and
// embedded resources name relay URIs (see RelayURI), so the agent can read them
// through the gateway. The server's result itself is not changed.
func relayResult(server string, res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil {
		return nil
	}
	content := relayContent(server, res.Content)
	if len(content) > 0 && &content[0] == &res.Content[0] {
		return res
	}
	cp := *res
	cp.Content = content
	return &cp
}

// tellWaiting sends a progress notification every WaitingEvery for as long as the
// call callID waits for a person: for its approval, or for the answer to a question
// its server asked the person while it ran (an elicitation). So an agent that asked
// for progress knows it is not lost, and one whose timer progress resets (Claude
// Code's idle timeout) does not give up on it; an agent that sent no progress token
// cannot be told anything. The returned func stops it and returns once no notice
// can follow: none is sent after the request's answer.
func (g *Gateway) tellWaiting(ctx context.Context, server, callID, what string, send func(string)) func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	var once sync.Once
	go func() {
		defer close(done)
		t := time.NewTicker(g.opts.WaitingEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			select {
			case <-stop: // answered as the tick came: say nothing
				return
			default:
			}
			if msg := g.waitingNotice(server, callID, what); msg != "" {
				send(msg)
			}
		}
	}()
	return func() {
		once.Do(func() { close(stop) })
		<-done
	}
}

// waitingNotice is what the call callID to server waits for, "" when it waits for no person.
func (g *Gateway) waitingNotice(server, callID, what string) string {
	for _, p := range g.m.Pending() {
		if p.CallID == callID {
			return fmt.Sprintf("waiting for a person to approve %s in airlock (%s left)", what, time.Until(p.Deadline).Round(time.Second))
		}
	}
	if g.m.QuestionWaiting(callID) {
		return fmt.Sprintf("waiting for a person to answer a question of %s in airlock (asked during %s)", server, what)
	}
	return ""
}

// watchSession ends an agent context's grants when one of its sessions disconnects.
// Its taint stays (see AgentContext).
func (g *Gateway) watchSession(ss *mcp.ServerSession, ctxName string) {
	g.mu.Lock()
	seen := g.ended[ss.ID()]
	g.ended[ss.ID()] = true
	g.mu.Unlock()
	if seen {
		return
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		waited := make(chan struct{})
		go func() { _ = ss.Wait(); close(waited) }()
		select {
		case <-waited:
			g.m.EndContext(ctxName)
			g.m.AgentHistories().End(ss.ID())
			g.endRelaySession(ss.ID())
			g.mu.Lock()
			delete(g.ended, ss.ID())
			g.mu.Unlock()
			// After the session is forgotten here: a call bound to it from now on
			// starts a watch of its own, which ends it at once.
			g.requesters.endSession(ss.ID())
		case <-g.done:
		}
	}()
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// Handler is the gateway's HTTP handler: Host and Origin allowlists (403), the bearer
// token (401), the body limit (413), then go-sdk's stateful streamable HTTP handler at
// /mcp. A request refused by its headers is answered from them without reading its
// body, and its connection closed: net/http would otherwise read up to 256 KiB of an
// unread body before it writes the answer, and a client without the token that
// trickles its body would hold the connection as long as it likes. An authenticated
// request's body is read within Options.BodyReadTimeout.
func (g *Gateway) Handler() http.Handler {
	// Not go-sdk's SessionTimeout: it ends a session whose agent only waits with its
	// event stream open (sessionLife counts the stream).
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.srv }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.allowed[hostName(r.Host)] {
			refuse(w, "forbidden host", http.StatusForbidden)
			return
		}
		if origin, ok := r.Header["Origin"]; ok && (len(origin) != 1 || !g.allowedOrigin(origin[0])) {
			refuse(w, "forbidden origin", http.StatusForbidden)
			return
		}
		tok, ok := g.authorized(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="airlock"`)
			refuse(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		// A session is its token's: another token's holder cannot use it. A request
		// that opens one names its token before its answer leaves (bindOnHeader).
		sid := r.Header.Get("Mcp-Session-Id")
		if sid != "" {
			if owner, known := g.owners.of(sid); known && owner != tok {
				refuse(w, "this session was opened with another token", http.StatusForbidden)
				return
			}
		} else {
			w = bindOnHeader(w, func(id string) { g.owners.bind(id, tok) })
		}
		defer servingAuthenticated(r)()
		if r.URL.Path != "/mcp" {
			refuse(w, "404 page not found", http.StatusNotFound)
			return
		}
		limit := g.MaxBody()
		if r.ContentLength > limit {
			refuse(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		if r.Body != nil && r.Method == http.MethodPost {
			// The body is read within its deadline; the deadline is lifted before
			// go-sdk runs the request, which may wait minutes for a person (net/http
			// watches the connection for its close with a read that must not time out).
			rc := http.NewResponseController(w)
			_ = rc.SetReadDeadline(time.Now().Add(g.opts.BodyReadTimeout))
			// A large body is admitted only while the bytes of large bodies in flight
			// stay within [limits] max_waiting_bytes: 120 agents sending 4 MB at once
			// must not all be read (and copied by decoding) at the same time. Beyond
			// the bound the call is refused at once with a tool error naming the limit.
			var head []byte // a chunked body's first bytes, read to see whether it is small
			n := r.ContentLength
			if n < 0 {
				var err error
				if head, err = io.ReadAll(io.LimitReader(r.Body, smallBody+1)); err != nil {
					refuse(w, "reading body", http.StatusBadRequest)
					return
				}
				if len(head) > smallBody {
					n = limit
					r.Body = struct {
						io.Reader
						io.Closer
					}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
				}
			}
			if n > smallBody {
				if !g.admit(n) {
					g.refuseBusy(w, r, limit)
					return
				}
				defer g.admitDone(n)
			}
			var body []byte
			if n < 0 {
				body = head
			} else {
				var err error
				if body, err = readBody(r, limit); err != nil {
					refuse(w, "reading body", http.StatusBadRequest)
					return
				}
			}
			if int64(len(body)) > limit {
				refuse(w, "request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			_ = rc.SetReadDeadline(time.Time{})
			// go-sdk reads the body once; the reader lets go of it when read, so a
			// call that waits for a person does not keep this copy alive too.
			r.Body = &onceReader{b: body}
		}
		if r.Method == http.MethodDelete && sid != "" {
			defer g.m.AgentHistories().End(sid)
		}
		var body []byte
		if ob, ok := r.Body.(*onceReader); ok {
			body = ob.b
		}
		w = g.historyOf(w, sid, tok, body)
		defer w.(*historyWriter).done()
		// The agent's credentials stop here: nothing of this request's headers is
		// forwarded upstream (upstream requests carry only the configured headers).
		r.Header.Del("Authorization")
		// Every request names its POST to the calls it carries, so that a call whose
		// agent went away ends with it; a DELETE ends its session's calls before
		// go-sdk closes the session, which would otherwise wait for them.
		defer g.requesters.post(r)()
		defer awaitingAnswer(r)()
		if r.Method == http.MethodDelete {
			if id := r.Header.Get("Mcp-Session-Id"); id != "" {
				g.requesters.endSession(id)
			}
		}
		if g.life != nil {
			g.life.serve(w, r, mcpHandler)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
}

// refuse answers a request that is not served, and closes its connection rather
// than reading what is left of its body first.
func refuse(w http.ResponseWriter, msg string, code int) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, code)
}

// readBody reads at most limit+1 bytes of the body, in one allocation when its
// length is known.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if n := r.ContentLength; n >= 0 && n <= limit {
		body := make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	return io.ReadAll(io.LimitReader(r.Body, limit+1))
}

// maxHeaderBytes bounds one request's headers (net/http answers 431 beyond it).
const maxHeaderBytes = 64 << 10

// smallBody is the size up to which a request body is read without admission.
const smallBody = 64 << 10

func (g *Gateway) admit(n int64) bool {
	g.inflightMu.Lock()
	defer g.inflightMu.Unlock()
	if g.inflight+n > g.m.Limits().MaxWaitingBytes {
		return false
	}
	g.inflight += n
	return true
}

func (g *Gateway) admitDone(n int64) {
	g.inflightMu.Lock()
	g.inflight -= n
	g.inflightMu.Unlock()
}

// refuseBusy answers a request that was not admitted: a tools/call gets a tool error
// result, anything else a JSON-RPC error, both naming the limit. The body is read
// one refusal at a time, only for its id and method.
func (g *Gateway) refuseBusy(w http.ResponseWriter, r *http.Request, limit int64) {
	g.refuseMu.Lock()
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	err := json.NewDecoder(io.LimitReader(r.Body, limit)).Decode(&msg)
	g.refuseMu.Unlock()
	if err != nil || len(msg.ID) == 0 {
		http.Error(w, "airlock: too many argument bytes are in flight from agents; try again later", http.StatusServiceUnavailable)
		return
	}
	text := fmt.Sprintf("airlock denied this call: call denied by policy: the calls in flight from agents already hold close to %d bytes of arguments (the limit is [limits] max_waiting_bytes); try again after they are answered", g.m.Limits().MaxWaitingBytes)
	var out any
	if msg.Method == "tools/call" {
		out = map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": errorResult(text)}
	} else {
		out = map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32000, "message": text}}
	}
	b, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// MaxBody is the largest request body the gateway reads.
func (g *Gateway) MaxBody() int64 {
	return max(int64(MinBodyLimit), int64(g.m.Limits().MaxArgsBytes)+64<<10)
}

// onceReader reads a byte slice once and drops it at the end.
type onceReader struct{ b []byte }

func (r *onceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		r.b = nil
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	if len(r.b) == 0 {
		r.b = nil
	}
	return n, nil
}

func (r *onceReader) Close() error { r.b = nil; return nil }

// hostName is the lower-cased host of a Host header value, without port or brackets.
func hostName(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	return strings.ToLower(strings.Trim(h, "[]"))
}

// allowedOrigin accepts http(s) origins on an allowed host; "null" and anything else
// (a page on another site) is refused.
func (g *Gateway) allowedOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Path != "" {
		return false
	}
	return g.allowed[hostName(u.Host)]
}

// authorized is the token the request presents: DefaultTokenName for the default
// token or a named token's name, with the SHA-256 of its value; ok false for none
// the gateway accepts now.
func (g *Gateway) authorized(r *http.Request) (tok owner, ok bool) {
	h := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return owner{}, false
	}
	got := []byte(h[len(prefix):])
	if subtle.ConstantTimeCompare(got, g.token.current()) == 1 {
		return owner{name: DefaultTokenName, sum: tokenSum(got)}, true
	}
	g.lookAtTokens()
	name, ok := g.named.lookup(got)
	if !ok {
		return owner{}, false
	}
	return owner{name: name, sum: tokenSum(got)}, true
}

// LoadOrCreateToken is OpenToken telling stderr when it replaced the token.
func LoadOrCreateToken(dir string) (string, error) {
	return OpenToken(dir, func(s string) { fmt.Fprintln(os.Stderr, "airlock: "+s) })
}

// OpenToken returns the gateway token stored in dir/gateway.token, creating a
// random one (256 bits, hex, owner-only) on first use, so agents' configs keep
// working across runs. A token file that is a symbolic link, belongs to another user
// or that others may read is not used: it is replaced by a new token (the link
// itself, never its target) and note is told why.
func OpenToken(dir string, note func(string)) (string, error) {
	path := filepath.Join(dir, "gateway.token")
	b, err := statefile.ReadFile(path)
	replaced := ""
	var refused *statefile.Error
	switch {
	case err == nil:
		tok := strings.TrimSpace(string(b))
		if len(tok) >= 32 {
			return tok, nil
		}
	case errors.As(err, &refused):
		replaced = refused.Reason()
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("reading gateway token: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(raw[:])
	if err := statefile.WriteFile(path, []byte(tok+"\n")); err != nil {
		return "", fmt.Errorf("storing gateway token: %w", err)
	}
	if replaced != "" && note != nil {
		note(replaced + "; airlock wrote a new token there instead: run `airlock gateway snippet` again and paste it into your agent's config")
	}
	return tok, nil
}

// writeDeadlines gives every write of a response (headers, body, flush) a deadline of
// d from the moment it starts, and the end of the response one too: a client that
// stops reading is cut off after d, while a response may take as long as it needs
// between writes (an agent's call waiting for a person, an idle event stream).
func writeDeadlines(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		renew := func() { _ = rc.SetWriteDeadline(time.Now().Add(d)) }
		renew()
		defer renew() // the server flushes what is buffered once the handler returns
		h.ServeHTTP(newHookWriter(w, renew), r)
	})
}

// hookWriter is a response writer that calls before ahead of every write of the
// response: its header, each part of its body and each flush (go-sdk flushes every
// server-sent event).
type hookWriter struct {
	http.ResponseWriter
	rc     *http.ResponseController
	before func()
}

func newHookWriter(w http.ResponseWriter, before func()) *hookWriter {
	return &hookWriter{ResponseWriter: w, rc: http.NewResponseController(w), before: before}
}

func (w *hookWriter) WriteHeader(code int) {
	w.before()
	w.ResponseWriter.WriteHeader(code)
}

func (w *hookWriter) Write(p []byte) (int, error) {
	w.before()
	return w.ResponseWriter.Write(p)
}

// Flush calls before, then flushes.
func (w *hookWriter) Flush() {
	w.before()
	_ = w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *hookWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// agentText escapes a server's text for an agent: control characters (C0, DEL, C1,
// including newlines) and format characters (bidi overrides, zero-width) become
// \uXXXX and invalid UTF-8 bytes \xNN, so one server's message cannot pass for another line or hide
// what it says.
func agentText(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
