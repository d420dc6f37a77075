// Command airlock is a terminal client for the Model Context Protocol that sorts every
// tool into a risk tier, asks a person before risky calls, and shows the risk of the
// whole toolset. This file only parses flags and wires packages together.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/demo"
	"github.com/airlock-mcp/airlock/ui"
	"github.com/airlock-mcp/airlock/ui/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `airlock — a terminal MCP client that asks before risky tool calls

Usage:
  airlock [--config FILE] [--no-tui]       open the session on the config (the TUI on a
                                           terminal, else the check view)
  airlock --from FILE                      the same on another client's server list
                                           (Claude, Cursor, VS Code, Codex), imported
  airlock demo [--json] [--no-tui]         the same on built-in offline demo servers
  airlock demo-server NAME                 serve one demo server over stdio (docs|web|notes|mail)
  airlock check [--config FILE] [--json]   connect, classify, print tiers and hazards
  airlock call SERVER TOOL [--args JSON] [--yes] [--config FILE]
                                           one call through the approval engine
  airlock pins list|accept SERVER [TOOL]   review pinned tool definitions
  airlock gateway snippet CLIENT [--demo]  a config block for an agent (--demo: the demo's gateway)
  airlock bridge [--demo]                  stdio <-> the running gateway
  airlock audit verify [FILE] [--demo]     check the audit log's chain; print its head
  airlock taint list|clear [CONTEXT]       see or clear tainted contexts (audited)
  airlock rules list|revoke ID             see or revoke remembered decisions (audited)
  airlock import FILE                      print airlock TOML for another client's servers
  airlock version

Exit codes of check: 0 every server ready, 1 config error, 3 a server failed.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := ""
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "", "check":
		return runCheck(ctx, cmd, args, stdin, stdout, stderr)
	case "demo":
		return runDemo(ctx, args, stdin, stdout, stderr)
	case "demo-server":
		return runDemoServer(ctx, args, stderr)
	case "call":
		return runCall(ctx, args, stdin, stdout, stderr)
	case "pins":
		return runPins(ctx, args, stdin, stdout, stderr)
	case "import":
		return runImport(args, stdout, stderr)
	case "gateway":
		return runGateway(args, stdout, stderr)
	case "bridge":
		return runBridge(ctx, args, stdin, stdout, stderr)
	case "audit":
		return runAudit(args, stdout, stderr)
	case "taint":
		return runTaint(args, stdout, stderr)
	case "rules":
		return runRules(args, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "airlock", version)
		return 0
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "airlock: unknown command %q\n\n%s", cmd, usage)
	return 2
}

// loadConfig reads --config or the default path.
func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		p, err := config.DefaultPath()
		if err != nil {
			return nil, err
		}
		path = p
		cfg, err := config.Load(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no config at %s: write one (start from config.example.toml), pass --config FILE, or try `airlock demo`", path)
		}
		return cfg, err
	}
	return config.Load(path)
}

// defaultConfigHint names the default config file for --help.
func defaultConfigHint() string {
	if p, err := config.DefaultPath(); err == nil {
		return p
	}
	return "config.toml in the platform's config folder"
}

// demoStateDir is where `airlock demo` keeps its gateway token, audit log and
// exported changes: the demo folder of the default state dir.
func demoStateDir() (string, error) {
	dir, err := config.DefaultStateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "demo"), nil
}

// openPins opens the pin store under the config's state dir.
func openPins(cfg *config.Config) (*session.Pins, error) {
	if cfg.StateDir == "" {
		return session.OpenPins("")
	}
	return session.OpenPins(filepath.Join(cfg.StateDir, "pins.json"))
}

func newManager(cfg *config.Config, opts session.Options) (*session.Manager, error) {
	if opts.Pins == nil {
		pins, err := openPins(cfg)
		if err != nil {
			return nil, err
		}
		opts.Pins = pins
	}
	opts.Version = version
	if opts.RulesFile == "" {
		p, err := session.RulesPath(cfg)
		if err != nil {
			return nil, err
		}
		opts.RulesFile = p
	}
	return session.New(cfg, opts), nil
}

func runCheck(ctx context.Context, cmd string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name := "airlock check"
	if cmd == "" {
		name = "airlock"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file (default "+defaultConfigHint()+")")
	fromPath := fs.String("from", "", "run on another client's server list (Claude, Cursor, VS Code, Codex), imported in memory")
	asJSON := fs.Bool("json", false, "print one JSON object")
	noTUI := fs.Bool("no-tui", false, "print the check view instead of opening the TUI")
	gatewayListen := fs.String("gateway", "", "serve agents at ADDR (host:port) while the TUI runs")
	noBell := fs.Bool("no-bell", false, "do not ring the terminal bell when an agent's call or a server's request for input arrives")
	failOn := fs.String("fail-on", "", "exit 4 when a hazard matches: kinds, severities or any, optionally unguarded:, comma-separated")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var rule *cli.FailOn
	if *failOn != "" {
		r, err := cli.ParseFailOn(*failOn)
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 2
		}
		rule = &r
	}
	cfg, err := loadSessionConfig(*cfgPath, *fromPath)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return cli.ExitConfig
	}
	if cmd == "" && !*asJSON && rule == nil && wantTUI(stdin, stdout, *noTUI) {
		audit, err := openAudit(cfg)
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 1
		}
		defer audit.Close()
		m, err := newManager(cfg, session.Options{Audit: audit})
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return cli.ExitConfig
		}
		return runSession(ctx, m, ui.Options{Title: sessionTitle(cfg, *fromPath), NoBell: *noBell}, gatewayFor(*gatewayListen, cfg), stderr)
	}
	m, err := newManager(cfg, session.Options{OAuth: showAuthorization(stderr)})
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return cli.ExitConfig
	}
	return checkFailOn(ctx, m, *asJSON, rule, stdout, stderr)
}

func check(ctx context.Context, m *session.Manager, asJSON bool, stdout, stderr io.Writer) int {
	return checkFailOn(ctx, m, asJSON, nil, stdout, stderr)
}

// checkFailOn prints the check report and, with a --fail-on rule, exits 4 when a
// hazard matches it (after the exit codes for config and server failures).
func checkFailOn(ctx context.Context, m *session.Manager, asJSON bool, rule *cli.FailOn, stdout, stderr io.Writer) int {
	defer m.Close()
	m.Start()
	if err := m.Wait(ctx); err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return cli.ExitServerFailed
	}
	r := cli.NewReport(m.Snapshot())
	if asJSON {
		err := r.WriteJSON(stdout)
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
		}
	} else if err := r.WriteText(stdout); err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
	}
	if code := r.ExitCode(); code != cli.ExitOK || rule == nil {
		return code
	}
	if hit := rule.Match(r.Hazards); len(hit) > 0 {
		for _, h := range hit {
			fmt.Fprintf(stderr, "airlock: --fail-on matched %s %s (unguarded=%v)\n", h.Severity, h.Kind, h.Unguarded)
		}
		return cli.ExitHazard
	}
	return cli.ExitOK
}

func runDemo(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airlock demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the check view as JSON")
	noTUI := fs.Bool("no-tui", false, "print the check view instead of opening the TUI")
	gatewayListen := fs.String("gateway", "", "serve agents at ADDR (host:port) while the TUI runs")
	tour := fs.Bool("tour", false, "open the TUI with a guided tour: captioned steps, space/n advances")
	noBell := fs.Bool("no-bell", false, "do not ring the terminal bell when an agent's call or a server's request for input arrives")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	set := demo.NewSet()
	cfg := demo.Config()
	inproc := map[string]*mcp.Server{}
	for _, n := range demo.Names() {
		inproc[n] = set.Server(n)
	}
	pins, _ := session.OpenPins("") // every demo starts from a clean slate
	if !*asJSON && wantTUI(stdin, stdout, *noTUI) {
		// The demo keeps its gateway token and audit log in the demo folder of the
		// default state dir, never over a person's own; `airlock gateway snippet`,
		// `airlock bridge` and `airlock audit verify` find them with --demo (or when
		// there is no config at all).
		dir, err := demoStateDir()
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 1
		}
		// Every demo starts from an empty demo folder (a running demo keeps it).
		release, cleared, err := session.ClaimDemoState(dir)
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 1
		}
		defer release()
		if !cleared {
			fmt.Fprintf(stderr, "airlock: another airlock demo is running; this one shares its folder %s\n", dir)
		}
		cfg.StateDir = dir
		audit, err := openAudit(cfg)
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 1
		}
		defer audit.Close()
		m := session.New(cfg, session.Options{InProcess: inproc, Pins: pins, Version: version, Audit: audit, MemoryTaint: true})
		gs := gatewayFor(*gatewayListen, cfg)
		gs.demo = true
		return runSession(ctx, m, ui.Options{Title: "demo", Demo: set.Notes().RugPull, Tour: *tour, NoBell: *noBell}, gs, stderr)
	}
	m := session.New(cfg, session.Options{InProcess: inproc, Pins: pins, Version: version})
	return check(ctx, m, *asJSON, stdout, stderr)
}

func runDemoServer(ctx context.Context, args []string, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "usage: airlock demo-server NAME (one of %v)\n", demo.Names())
		return 2
	}
	if err := demo.ServeStdio(ctx, args[0]); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "airlock demo-server %s: %v\n", args[0], err)
		return 1
	}
	return 0
}
