package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/conn"
	"github.com/airlock-mcp/airlock/session/oauth"
	"github.com/airlock-mcp/airlock/session/pins"
	"github.com/airlock-mcp/airlock/trust"
)

// server is one configured server and its current connection. Every field below mu is
// guarded by it; gen numbers connections so that work from a replaced connection is
// recognised and dropped.
type server struct {
	m   *Manager
	cfg config.Server
	// ruleSets are the config rules of each tool, compiled once (configRuleSet).
	ruleSetsMu sync.Mutex
	ruleSets   map[string]*trust.RuleSet
	stderr     *conn.Ring
	// hist is the server's protocol history, kept across its reconnects.
	hist *conn.History
	// envNames are the environment variable names the server's process receives
	// (stdio only; EnvNames), shown by check and the tool detail.
	envNames []string

	mu           sync.Mutex
	gen          uint64
	status       model.Status
	err          error
	cs           *mcp.ClientSession
	proc         *conn.Process
	endLife      context.CancelFunc // ends the connection's lifetime context
	capt         *conn.Capture
	protocol     string
	instructions string
	impl         *mcp.Implementation
	caps         *mcp.ServerCapabilities
	tools        []listedTool
	pins         pins.Outcome
	notices      []string // listNotices plus what the pins said
	listNotices  []string
	ruleErrors   []model.RuleError // the config's rules that can never match this listing
	listing      uint64            // bumped whenever tools or pins are stored
	catalogVer   uint64            // bumped whenever resources, templates or prompts are stored
	snapCache    *serverSnap       // this server's part of the last snapshot
	refreshing   bool
	trailing     bool
	connectedAt  time.Time
	authz        *oauth.Handler // built on first connect when the server has an oauth table
	authzClosed  bool           // the Manager closed: no handler is built any more
	catalog      catalog        // resources, templates and prompts (catalog.go)
	// catRefreshing and catTrailing coalesce catalog refreshes like refreshing and
	// trailing do tool refreshes; subscribed holds the URIs subscribed to on the
	// current connection (a resources/updated for another URI is dropped).
	catRefreshing, catTrailing bool
	subscribed                 map[string]map[string]bool // URI → holders (SubscribeFor)
	subMu                      sync.Mutex                 // orders subscription changes (channels.go)
	// client is the go-sdk client of the current connection (it holds the roots).
	client *mcp.Client
	// roots are the file:// URIs roots/list answers (nil: the roots capability is
	// not declared); declaredRoots says whether the current connection declared it.
	roots         []string
	declaredRoots bool
	// deprecated lists the deprecated features the server used (usedDeprecated).
	deprecated []string
	infoVer    uint64 // bumped with roots, deprecated and fence: the snapshot cache key
	// fence is what the current (or last tried) start's sandbox enforces: what
	// the config asks until the launcher reports what it applied.
	fence trust.Fence

	logMu       sync.Mutex // guards the log rate limit below; never held with mu
	logLimit    *rate.Limiter
	logDropped  int       // lines dropped since the last report
	logReported time.Time // when dropped lines were last reported

	progDropped  int       // progress notifications dropped since the last report
	progReported time.Time // when they were last reported (guarded by logMu too)
}

// dropProgress counts a progress notification this server sent for a token that is
// not one of its own running calls (a guessed or stale token) and reports the count
// as an airlock line at most once a second.
func (s *server) dropProgress() {
	now := time.Now()
	s.logMu.Lock()
	s.progDropped++
	var report int
	if now.Sub(s.progReported) >= time.Second {
		report, s.progDropped, s.progReported = s.progDropped, 0, now
	}
	s.logMu.Unlock()
	if report > 0 {
		s.m.events.push(model.LogLine{Server: s.cfg.Name, Source: "airlock", Text: fmt.Sprintf(
			"%d progress notifications dropped: their token is not one of a running call to this server", report)})
	}
}

func newServer(m *Manager, cfg config.Server) *server {
	s := &server{m: m, cfg: cfg, logLimit: rate.NewLimiter(logLinesPerSecond, logLinesPerSecond)}
	s.roots = rootURIs(cfg.Roots)
	s.fence = conn.RequestedFence(cfg)
	s.stderr = conn.NewRing(conn.StderrKeepBytes, func(line string) {
		s.pushLog("stderr", line)
	})
	if !m.opts.NoHistory {
		s.hist = conn.NewHistory(m.opts.Now)
	}
	if _, inProcess := m.opts.InProcess[cfg.Name]; !inProcess {
		s.envNames = conn.EnvNames(cfg)
	}
	return s
}

// logLinesPerSecond bounds the LogLine events one server can cause (stderr lines and
// logging notifications together, burst of the same size). A server that floods
// (hostile cases 26, 29) would otherwise fill the shared event queue, pushing out every
// other server's lines and keeping the UI busy redrawing; beyond the limit lines are
// dropped from the events and counted (stderr lines stay in the server's ring).
const logLinesPerSecond = 200

// pushLog reports one line from the server as a LogLine event within the server's
// rate limit. Dropped lines are counted and the count is reported as an airlock line
// with the next line that arrives at least a second after the last report, so a flood
// is said out loud and costs at most one extra event a second. (The count of the last
// second of a flood waits for the server's next line.)
func (s *server) pushLog(source, text string) {
	now := time.Now() // the limit is about real throughput, whatever Options.Now says
	s.logMu.Lock()
	allowed := s.logLimit.AllowN(now, 1)
	if !allowed {
		s.logDropped++
	}
	var report int
	if s.logDropped > 0 && now.Sub(s.logReported) >= time.Second {
		report, s.logDropped, s.logReported = s.logDropped, 0, now
	}
	s.logMu.Unlock()
	if report > 0 {
		s.m.events.push(model.LogLine{Server: s.cfg.Name, Source: "airlock", Text: fmt.Sprintf(
			"%d log lines not shown: the server sent more than %d a second (stderr keeps its last %d KiB)",
			report, logLinesPerSecond, conn.StderrKeepBytes>>10)})
	}
	if allowed {
		s.m.events.push(model.LogLine{Server: s.cfg.Name, Source: source, Text: text})
	}
}

// connect replaces any current connection with a new one and lists its tools. It
// returns when the server is ready or failed.
func (s *server) connect(parent context.Context) {
	s.disconnect()
	s.mu.Lock()
	s.gen++
	gen := s.gen
	s.status, s.err, s.tools, s.notices = model.StatusConnecting, nil, nil, nil
	s.catalog, s.subscribed = catalog{}, nil
	s.mu.Unlock()
	s.m.changed(s.cfg.Name, gen, model.StatusConnecting)

	if t := s.m.serverTrust(s); t == trust.BlockedServer {
		if _, why := policyTrustSource(s, t); why != "" {
			s.fail(gen, errors.New("server is blocked: "+why+"; airlock does not start or connect to it"))
			return
		}
		s.fail(gen, errors.New("server is blocked in the config: airlock does not connect to it"))
		return
	}
	timeout := s.cfg.ConnectTimeout
	if timeout <= 0 {
		timeout = config.DefaultConnectTimeout
	}
	deadline := timeout
	if s.cfg.OAuth != nil {
		deadline += oauth.LoginTimeout // the person may have to log in first
	}
	ctx, cancel := context.WithTimeout(parent, deadline)
	defer cancel()

	var client *mcp.Client
	var rootsDeclared bool
	cs, proc, capt, endLife, err := s.dial(ctx, gen, &client, &rootsDeclared)
	if err == nil {
		var tools []listedTool
		var notices []string
		tools, notices, err = listTools(ctx, cs, capt)
		if err == nil {
			s.mu.Lock()
			stale := s.gen != gen
			if !stale {
				s.cs, s.proc, s.capt, s.endLife = cs, proc, capt, endLife
				s.client, s.declaredRoots = client, rootsDeclared
				init := cs.InitializeResult()
				s.protocol = init.ProtocolVersion
				s.instructions = init.Instructions
				s.impl = init.ServerInfo
				s.caps = init.Capabilities
				s.connectedAt = s.m.opts.Now()
				s.catalog, s.subscribed = declared(init), nil
			}
			s.mu.Unlock()
			if stale {
				conn.Close(cs, proc, endLife)
				return
			}
			s.setTools(gen, tools, notices)
			go s.watch(gen, cs, proc)
			// Resources, templates and prompts after the server is ready (its tools
			// work meanwhile), before the first attempt counts as done (Wait), each
			// list within the connect timeout.
			s.setCatalog(gen, listCatalog(s.m.ctx, cs, timeout))
			return
		}
		conn.Close(cs, proc, endLife)
	}
	if proc != nil {
		proc.Stop() // done already when the handshake succeeded
		if perr := proc.ExitError(); perr != nil && !errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w (%v)", err, perr)
		}
		s.mu.Lock()
		noNet := s.fence.NoNetwork()
		s.mu.Unlock()
		if noNet {
			err = fmt.Errorf(`%w; the server is fenced with network = "none": it cannot reach any host, so a command that downloads its package first (npx, uvx) fails; install the package and run it directly, or set network = "all"`, err)
		}
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("no answer within the connect timeout (%s): %w", timeout, err)
	}
	s.fail(gen, s.withStderr(err))
}

// withStderr appends the last stderr lines to a connection error: they usually say why.
func (s *server) withStderr(err error) error {
	tail := strings.TrimSpace(s.stderr.Tail(3))
	if tail == "" {
		return err
	}
	return fmt.Errorf("%w; stderr: %s", err, tail)
}

func (s *server) fail(gen uint64, err error) {
	s.mu.Lock()
	if s.gen != gen {
		s.mu.Unlock()
		return
	}
	s.status, s.err = model.StatusFailed, conn.RedactURLs(err)
	s.mu.Unlock()
	s.m.changed(s.cfg.Name, gen, model.StatusFailed)
}

// dial opens the transport and runs the MCP handshake.
func (s *server) dial(ctx context.Context, gen uint64, clientOut **mcp.Client, declaredRoots *bool) (*mcp.ClientSession, *conn.Process, *conn.Capture, context.CancelFunc, error) {
	link, err := conn.Open(ctx, s.cfg, conn.Dial{
		InProcess:    s.m.opts.InProcess[s.cfg.Name],
		Stderr:       s.stderr,
		Fence:        func(f trust.Fence) { s.setFenceOf(gen, f) },
		OAuth:        s.oauthHandler,
		WriteTimeout: s.callTimeout(),
		History:      s.hist,
	})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	proc := link.Proc
	life, endLife := context.WithCancel(s.m.ctx)
	name := s.cfg.Name
	s.mu.Lock()
	roots := s.roots
	s.mu.Unlock()
	client := mcp.NewClient(&mcp.Implementation{Name: s.m.opts.ClientName, Version: s.m.opts.Version}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			s.refresh(gen)
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			s.refreshCatalog(gen)
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			s.refreshCatalog(gen)
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			s.resourceUpdated(gen, req.Params)
		},
		//lint:ignore SA1019 servers before protocol 2026-07-28 still log this way
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			s.m.usedDeprecated(name, DeprecatedLogging)
			s.pushLog("log:"+string(req.Params.Level), logText(req.Params))
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if !s.m.engine.Progress(name, req.Params) {
				s.dropProgress()
			}
		},
		ElicitationHandler: s.m.elicitationHandler(name),
		//lint:ignore SA1019 servers before protocol 2026-07-28 still sample this way
		CreateMessageWithToolsHandler: s.m.samplingHandler(name),
		Capabilities:                  clientCapabilities(roots),
	})
	setRoots(client, nil, roots)
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "roots/list" {
				s.m.usedDeprecated(name, DeprecatedRoots)
			}
			return next(ctx, method, req)
		}
	})
	protocol := s.cfg.Protocol
	if protocol == "" {
		protocol = DefaultProtocol
	}
	cs, err := client.Connect(ctx, link.Transport(life, endLife), &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		endLife()
		return nil, proc, nil, nil, fmt.Errorf("initializing: %w", link.Refused(err))
	}
	*clientOut, *declaredRoots = client, roots != nil
	return cs, proc, link.Capture, endLife, nil
}

// oauthHandler returns the server's OAuth handler, built on first use and kept
// across reconnects so that its token is too; nil without an oauth table.
func (s *server) oauthHandler() (*oauth.Handler, error) {
	if s.cfg.OAuth == nil || s.cfg.Transport != config.TransportHTTP {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.authzClosed {
		return nil, errors.New("airlock is closing")
	}
	if s.authz == nil {
		h, err := oauth.New(s.cfg.Name, s.cfg.URL, *s.cfg.OAuth, s.m.tokens, s.m.opts.OAuth, oauthReporter{s.cfg.Name, s.m.events.push})
		if err != nil {
			return nil, err
		}
		s.authz = h
	}
	return s.authz, nil
}

// closeAuthz lets go of the OAuth handler's redirect port; no handler is built
// after it.
func (s *server) closeAuthz() {
	s.mu.Lock()
	h := s.authz
	s.authz, s.authzClosed = nil, true
	s.mu.Unlock()
	if h != nil {
		h.Close()
	}
}

//lint:ignore SA1019 servers before protocol 2026-07-28 still log this way
func logText(p *mcp.LoggingMessageParams) string {
	var text string
	if s, ok := p.Data.(string); ok {
		text = s
	} else if b, err := json.Marshal(p.Data); err == nil {
		text = string(b)
	}
	if p.Logger != "" {
		text = p.Logger + ": " + text
	}
	return text
}

// watch waits for the connection to end and reports the server failed unless the end
// was asked for.
func (s *server) watch(gen uint64, cs *mcp.ClientSession, proc *conn.Process) {
	err := cs.Wait()
	s.mu.Lock()
	current := s.gen == gen && s.cs == cs
	s.mu.Unlock()
	if !current {
		return
	}
	err = conn.Ended(err, proc)
	s.mu.Lock()
	if s.gen == gen {
		s.cs, s.proc = nil, nil
	}
	s.mu.Unlock()
	s.fail(gen, s.withStderr(fmt.Errorf("disconnected: %w", err)))
}

// disconnect closes the current connection, if any, and stops its process group.
func (s *server) disconnect() {
	s.mu.Lock()
	cs, proc, endLife := s.cs, s.proc, s.endLife
	s.cs, s.proc, s.endLife = nil, nil, nil
	s.gen++ // everything from the old connection is stale now
	s.mu.Unlock()
	conn.Close(cs, proc, endLife)
}

// refresh re-lists the tools after tools/list_changed, coalesced: at most one listing
// in flight plus one trailing, however many notifications arrive.
func (s *server) refresh(gen uint64) {
	s.mu.Lock()
	if s.gen != gen || s.cs == nil {
		s.mu.Unlock()
		return
	}
	if s.refreshing {
		s.trailing = true
		s.mu.Unlock()
		return
	}
	s.refreshing = true
	cs, capt := s.cs, s.capt
	s.mu.Unlock()

	s.m.wg.Add(1)
	go func() {
		defer s.m.wg.Done()
		for {
			ctx, cancel := context.WithTimeout(s.m.ctx, s.callTimeout())
			tools, notices, err := listTools(ctx, cs, capt)
			cancel()
			if err == nil {
				s.setTools(gen, tools, notices)
			} else {
				s.m.events.push(model.LogLine{Server: s.cfg.Name, Source: "airlock", Text: "refreshing the tool list failed: " + conn.RedactURLs(err).Error()})
			}
			s.mu.Lock()
			if !s.trailing || s.gen != gen {
				s.refreshing, s.trailing = false, false
				s.mu.Unlock()
				return
			}
			s.trailing = false
			s.mu.Unlock()
		}
	}()
}

func (s *server) callTimeout() time.Duration {
	if s.cfg.CallTimeout > 0 {
		return s.cfg.CallTimeout
	}
	return config.DefaultCallTimeout
}

// setTools stores a new listing, compared against the pins.
func (s *server) setTools(gen uint64, tools []listedTool, listNotices []string) {
	notices := slices.Clone(listNotices)
	s.mu.Lock()
	instructions := s.instructions
	s.mu.Unlock()
	// A first listing of 10,000 tools writes megabytes of pins; the listing is shown
	// without waiting for the write (the pins are decided under the lock all the
	// same), and a call is forwarded only after it (Manager.call: waitSaved). The
	// write starts once the snapshot showing the listing is built: on two cores the
	// two at once made the first screen wait. A write that fails is said once the
	// listing is stored.
	stored := make(chan struct{})
	defer close(stored)
	out, writePins, err := s.m.pins.ObserveThen(s.identity(), s.cfg.Name, instructions, pinsListed(tools), s.m.opts.Now(), func(err error) {
		if err != nil {
			<-stored
			s.pinsNotSaved(gen, err)
		}
	})
	if writePins != nil {
		defer writePins()
	}
	if err != nil {
		notices = append(notices, "pins could not be saved: "+err.Error())
	}
	if len(out.Removed) > 0 {
		notices = append(notices, "tools removed since pinned: "+shortList(out.Removed, 5))
	}
	ruleErrors := ruleErrors(s.cfg, tools)
	for _, n := range ruleErrors {
		s.m.events.push(model.LogLine{Server: s.cfg.Name, Source: "airlock", Text: "error: " + n.Text})
	}
	if out.Inherited {
		n := "pins of " + s.cfg.Name + " were found under another identity (its command, arguments, working directory or environment names changed): the tools are compared against those"
		notices = append(notices, n)
		s.m.events.push(model.LogLine{Server: s.cfg.Name, Source: "airlock", Text: n})
	}
	// The listing is stored and the cached snapshot dropped under the publish lock,
	// so that a call's last check before forwarding sees it or comes before it.
	s.m.publish.Lock()
	s.mu.Lock()
	if s.gen != gen {
		s.mu.Unlock()
		s.m.publish.Unlock()
		return
	}
	s.tools, s.listNotices, s.notices, s.ruleErrors, s.pins = tools, listNotices, notices, ruleErrors, out
	s.listing++
	s.status, s.err = model.StatusReady, nil
	s.mu.Unlock()
	s.m.dropSnapshot()
	s.m.publish.Unlock()
	s.m.announce(s.cfg.Name, gen, model.StatusReady)
	if writePins != nil {
		// Built now, for whoever asks next (the TUI, a gateway listing), so that it is
		// not built while the pins are written. With nothing to write it is built when
		// someone asks: 20 servers listing at start would otherwise build 20 snapshots
		// That a one-shot command never reads.
		s.m.Snapshot()
	}
}

// pinsNotSaved adds to listing gen's notices that its pins could not be written.
func (s *server) pinsNotSaved(gen uint64, err error) {
	s.m.publish.Lock()
	s.mu.Lock()
	ok := s.gen == gen
	if ok {
		s.notices = append(slices.Clone(s.notices), "pins could not be saved: "+err.Error())
		s.listing++
	}
	st := s.status
	s.mu.Unlock()
	s.m.dropSnapshot()
	s.m.publish.Unlock()
	if ok {
		s.m.announce(s.cfg.Name, gen, st)
	}
}

// ErrCallTimeout is returned (wrapped) when a call to a server had no answer within
// the server's call timeout.
var ErrCallTimeout = errors.New("no answer within the call timeout")

// call forwards one allowed call with the server's call timeout.
func (s *server) call(ctx context.Context, req model.CallRequest, progress string) (*mcp.CallToolResult, error) {
	s.mu.Lock()
	cs, proc := s.cs, s.proc
	s.mu.Unlock()
	if cs == nil {
		return nil, fmt.Errorf("calling %s__%s: %w", req.Server, req.Tool, errNotReady)
	}
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout())
	defer cancel()
	params := &mcp.CallToolParams{Name: req.Tool, Arguments: req.Args}
	params.SetProgressToken(progress)
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			then := "the server was told to cancel"
			if proc != nil && proc.StallErr() != nil {
				then = proc.StallErr().Error() + ", and is being stopped"
			}
			return nil, fmt.Errorf("calling %s__%s: %w (%s); %s", req.Server, req.Tool, ErrCallTimeout, s.callTimeout(), then)
		}
		return nil, conn.RedactURLs(fmt.Errorf("calling %s__%s: %w", req.Server, req.Tool, err))
	}
	return res, nil
}

// oauthReporter passes what a server's OAuth handler says on as the server's events.
type oauthReporter struct {
	server string
	push   func(model.Event)
}

func (r oauthReporter) AuthorizationRequested(url string) {
	r.push(model.AuthorizationRequested{Server: r.server, URL: url})
}

func (r oauthReporter) Log(text string) {
	r.push(model.LogLine{Server: r.server, Source: "airlock", Text: text})
}

func (r oauthReporter) Error(err error) {
	r.push(model.LogLine{Server: r.server, Source: "airlock", Text: conn.RedactURLs(err).Error()})
}

// setFence records what the launcher reported of the sandbox of the process it is
// about to start (or did not start): the snapshot shows it and classification
// reads it (trust.Classify's Tool.Fence) from the next build on. It takes s.mu, so
// call it without it held, before the connection lists tools. The zero Fence is a
// server with no sandbox asked for. The launcher's report reaches it through
// setFenceOf in (*server).connect, on every start, refused and failed ones too.
func (s *server) setFence(f trust.Fence) { s.setFenceOf(0, f) }

// setFenceOf is setFence for the start of connection gen: a report that comes
// after a newer start began is dropped (gen 0: always set).
func (s *server) setFenceOf(gen uint64, f trust.Fence) {
	f.Read, f.Write = slices.Clone(f.Read), slices.Clone(f.Write)
	s.mu.Lock()
	if gen != 0 && s.gen != gen {
		s.mu.Unlock()
		return
	}
	s.fence = f
	s.infoVer++ // the snapshot cache key: every tool is classified again
	s.mu.Unlock()
	s.m.dropSnapshot()
	s.m.notify()
}

// fenceableOS says this system has a launcher that fences (Landlock, Seatbelt);
// on Windows a sandbox is refused.
var fenceableOS = runtime.GOOS != "windows"

// fenceable reports whether a sandbox can be applied to s: a stdio server airlock
// starts itself, on a system that fences. Only then is a fence proposed as a fix.
func (s *server) fenceable() bool {
	if _, inProcess := s.m.opts.InProcess[s.cfg.Name]; inProcess {
		return false
	}
	return fenceableOS && s.cfg.Transport == config.TransportStdio
}

// configFence is the sandbox the config asks for, as a Fence that is not applied
// (Requested, Network, Read, Write): what `check --snapshot` compares a recorded
// sandbox with, since nothing is launched there. The zero Fence: none asked for.
// It reads the server's [servers.NAME.sandbox] table.
var configFence = func(s config.Server) trust.Fence {
	f := conn.RequestedFence(s)
	f.Detail = ""
	return f
}
