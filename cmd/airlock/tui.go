package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/airlock-mcp/airlock/internal/gctune"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/ui"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

// wantTUI reports whether to open the TUI: both ends are a terminal and the person
// did not ask for printed output.
func wantTUI(stdin io.Reader, stdout io.Writer, noTUI bool) bool {
	return !noTUI && isTerminal(stdin) && isTerminal(stdout)
}

// runTUI runs the TUI on m until the person quits, then closes m (pending approvals
// are denied).
func runTUI(ctx context.Context, m *session.Manager, opts ui.Options, stderr io.Writer) int {
	defer m.Close()
	// The first listings' heap in huge pages, until every server has made its first
	// attempt (heap_linux.go). m is started here, not by ui.Run, so that the wait
	// counts its servers (both callers hand over a Manager not started).
	warmed := warmHeap()
	m.Start()
	opts.Started = true
	go func() {
		_ = m.Wait(ctx)
		warmed()
	}()
	// The collector keeps the process within what the bounds on waiting calls allow
	// (gctune.Budget): agents' calls may wait here with megabytes of arguments.
	gctune.Tune(false, gctune.Budget(m.Config().Limits.WithDefaults().MaxWaitingBytes))
	if err := ui.Run(ctx, m, opts); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	return 0
}

// gatewaySpec says whether and where to serve agents while the TUI runs.
type gatewaySpec struct {
	listen      string // "" = no gateway
	allowRemote bool
	stateDir    string // where gateway.token lives
	demo        bool   // the demo's gateway: commands that reach it need --demo
}

// gatewayFor merges the --gateway flag with the config's [gateway] table.
func gatewayFor(flagListen string, cfg *config.Config) gatewaySpec {
	g := gatewaySpec{listen: flagListen, stateDir: cfg.StateDir}
	if cfg.Gateway != nil {
		if g.listen == "" {
			g.listen = cfg.Gateway.Listen
		}
		g.allowRemote = cfg.Gateway.AllowRemote
	}
	return g
}

// runSession starts the gateway when asked, then the TUI; it stops both on quit.
func runSession(ctx context.Context, m *session.Manager, opts ui.Options, gs gatewaySpec, stderr io.Writer) int {
	// An airlock before this one that did not shut down cleanly is said before
	// the TUI starts, in its status line, and again after it ends.
	notices, done := startRun(m.Config().StateDir, "airlock", false)
	defer done()
	for _, s := range notices {
		noteTo(stderr, "airlock: warning")(s)
	}
	defer func() {
		for _, s := range notices {
			noteTo(stderr, "airlock: warning")(s)
		}
	}()
	opts.Notice = strings.Join(notices, "; ")
	if gs.listen != "" {
		// A replaced token is noted before the TUI starts and again after it ends,
		// so the person sees it whatever the TUI drew over it.
		var notes []string
		token, err := gateway.ReadToken(gs.stateDir, func(s string) {
			notes = append(notes, s)
			noteTo(stderr, "airlock")(s)
		})
		defer func() {
			for _, s := range notes {
				noteTo(stderr, "airlock")(s)
			}
		}()
		if err != nil {
			m.Close()
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 1
		}
		g, err := gateway.New(m, gateway.Options{Listen: gs.listen, AllowRemote: gs.allowRemote, Token: token, TokenFile: gateway.TokenPath(gs.stateDir),
			TokensFile:         gateway.TokensPath(gs.stateDir),
			SessionIdleTimeout: agentSessionIdle,
			// The TUI owns the terminal: the gateway's own notes go to the Logs view.
			Log: func(s string) { m.Note("gateway", s) }})
		if err == nil {
			err = g.Start()
		}
		if err != nil {
			m.Close()
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 1
		}
		defer g.Close()
		// Recorded so that snippet and bridge find the gateway where it runs.
		forget, err := recordGatewayAddr(gs.stateDir, g.URL())
		if err != nil {
			fmt.Fprintf(stderr, "airlock: could not record the gateway's address for snippet and bridge: %v\n", err)
		}
		defer forget()
		opts.GatewayURL = g.URL()
		opts.GatewayHint = "airlock gateway snippet claude|codex|gemini|cursor|vscode --gateway " + gs.listen
		if gs.demo {
			opts.GatewayHint += " --demo"
		}
	}
	return runTUI(ctx, m, opts, stderr)
}

// agentSessionIdle ends an agent session with nothing in flight for this long: no
// request and no event stream open, so its agent vanished (gateway.Options).
// supergateway's default is the same.
const agentSessionIdle = 30 * time.Minute

// openAudit opens the config's audit log (default: audit.jsonl in the state dir).
// A damaged log is opened too: it refuses every record, so every call that needs one
// is refused with the sentence saying why (auditNotice says it up front).
func openAudit(cfg *config.Config) (*audit.Log, error) {
	a, err := audit.Open(auditPath(cfg))
	if err != nil {
		return nil, err
	}
	a.SetDecisionsUnsynced(cfg.AuditDecisionsUnsynced)
	if cfg.AuditSegmentBytes > 0 {
		a.SetSegmentBytes(cfg.AuditSegmentBytes)
	}
	return a, nil
}

// auditNotice prints what is wrong with the audit log, if anything, prefixed with
// the command's name.
func auditNotice(w io.Writer, prefix string, a *audit.Log) {
	if err := a.Problem(); err != nil {
		fmt.Fprintf(w, "%s: %s\n", prefix, safetext.Inline(err.Error()))
	}
}
