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
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/gctune"
	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/pollstdin"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/demo"
	"github.com/airlock-mcp/airlock/session/fence"
	"github.com/airlock-mcp/airlock/session/pins"
	"github.com/airlock-mcp/airlock/ui"
	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if len(os.Args) == 3 && os.Args[1] == fence.LauncherArg {
		// The sandbox launcher of a fenced server: not a command anyone types.
		os.Exit(fence.Main(os.Args[2]))
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := ""
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	if cmd == "help" || wantsHelp(args) {
		// Help goes to stdout and exits 0, from the one table in help.go and
		// each command's own flag set.
		return writeHelp(stdout, stderr, cmd, args)
	}
	return dispatch(ctx, cmd, args, stdin, stdout, stderr)
}

// dispatch runs one command.
func dispatch(ctx context.Context, cmd string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch cmd {
	case "", "check":
		return runCheck(ctx, cmd, args, stdin, stdout, stderr)
	case "demo":
		return runDemo(ctx, args, stdin, stdout, stderr)
	case "snapshot":
		return runSnapshot(ctx, args, stdout, stderr)
	case "demo-server":
		return runDemoServer(ctx, args, stderr)
	case "call":
		return runCall(ctx, args, stdin, stdout, stderr)
	case "read":
		return runRead(ctx, args, stdin, stdout, stderr)
	case "prompt":
		return runPrompt(ctx, args, stdin, stdout, stderr)
	case "pins":
		return runPins(ctx, args, stdin, stdout, stderr)
	case "import":
		return runImport(args, stdout, stderr)
	case "gateway":
		return runGateway(args, stdout, stderr)
	case "bridge":
		if stdin == os.Stdin {
			stdin = pollstdin.Stdin() // the agent's pipe: see internal/pollstdin
		}
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
	}
	fmt.Fprintf(stderr, "airlock: unknown command %q (airlock help lists every command)\n", cmd)
	return 2
}

// loadConfig reads --config or the default path.
// configOrSay is loadConfig for a command: a config that cannot be loaded is said
// on stderr (ok false: the command exits cli.ExitConfig).
func configOrSay(path string, stderr io.Writer) (cfg *config.Config, ok bool) {
	cfg, err := loadConfig(path)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return nil, false
	}
	return cfg, true
}

// failedCode says why a call, read or prompt failed on stderr and returns its exit
// code: 5 when it was denied, 6 when the tool's result does not match its output
// schema (the result itself is not printed), 1 for any other failure, 0 when err is
// nil.
func failedCode(err error, stderr io.Writer) int {
	var denied *model.DeniedError
	switch {
	case errors.As(err, &denied):
		fmt.Fprintf(stderr, "airlock: %s\n", safetext.Inline(denied.Error()))
		return 5
	case errors.Is(err, model.ErrResultSchema):
		fmt.Fprintf(stderr, "airlock: %s\n", safetext.Inline(err.Error()))
		return 6
	case err != nil:
		return failed(err, stderr)
	}
	return 0
}

// failed says err on stderr, as one line, and returns exit code 1.
func failed(err error, stderr io.Writer) int {
	fmt.Fprintf(stderr, "airlock: %s\n", safetext.Inline(err.Error()))
	return 1
}

// argsRefused says on stderr why --args would be refused by the canonical check
// Manager.Call makes (a duplicate key, invalid UTF-8, anything but an object), so
// that it is refused before anything connects.
func argsRefused(argJSON string, stderr io.Writer) bool {
	if _, err := approval.CanonicalArgs([]byte(argJSON)); err != nil {
		fmt.Fprintf(stderr, "airlock: --args: %s\n", safetext.Inline(err.Error()))
		return true
	}
	return false
}

func loadConfig(path string) (*config.Config, error) {
	p, err := configPath(path)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(p)
	if path == "" && errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no config at %s: write one (start from config.example.toml), pass --config FILE, or try `airlock demo`", p)
	}
	if err != nil {
		return nil, err
	}
	return withPolicy(cfg)
}

// withPolicy applies the managed policy files (docs/policy.md) to cfg: every config
// a command runs on, the demo's included, goes through it. A policy file that
// exists but cannot be read or trusted stops the command (fail closed).
func withPolicy(cfg *config.Config) (*config.Config, error) {
	if err := config.ApplyPolicies(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// configPath is path, or the default config path when path is empty.
func configPath(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	return config.DefaultPath()
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
func openPins(cfg *config.Config) (*pins.Store, error) {
	if cfg.StateDir == "" {
		return pins.Open("")
	}
	return pins.Open(filepath.Join(cfg.StateDir, "pins.json"))
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
		p, err := approval.RulesPath(cfg)
		if err != nil {
			return nil, err
		}
		opts.RulesFile = p
	}
	return session.New(cfg, opts), nil
}

// startOneShot makes and starts the Manager of a one-shot command (call, read,
// prompt, snapshot), with the collector tuned for a short run (see gctune.Tune); ok is
// false when it cannot be made, which is said on stderr and is cli.ExitConfig.
func startOneShot(cfg *config.Config, opts session.Options, stderr io.Writer) (*session.Manager, bool) {
	gctune.Tune(true, 0)
	m, err := newManager(cfg, opts)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return nil, false
	}
	m.Start()
	return m, true
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
	asJSON := fs.Bool("json", false, "print one JSON object (the same as --format json)")
	// The TUI's flags belong to bare airlock only: check never opens the TUI.
	noTUI, gatewayListen, noBell, noNotify := new(bool), new(string), new(bool), new(bool)
	if cmd == "" {
		noTUI = fs.Bool("no-tui", false, "print the check view instead of opening the TUI")
		gatewayListen = fs.String("gateway", "", "serve agents at ADDR (host:port) while the TUI runs")
		noBell = fs.Bool("no-bell", false, "do not ring the terminal bell when an agent's call or a server's request for input arrives")
		noNotify = fs.Bool("no-notify", false, "do not send a desktop notification (OSC 9/777, or [notify] command) when a question arrives while the terminal is not focused")
	}
	var opts checkOptions
	fs.StringVar(&opts.failOnSpec, "fail-on", "", "exit 4 when a hazard matches: kinds, severities or any, optionally unguarded:, or drift; comma-separated")
	fs.StringVar(&opts.format, "format", "", "output format: "+strings.Join(cli.Formats, "|")+" (default text)")
	fs.StringVar(&opts.snapshot, "snapshot", "", "evaluate a snapshot FILE written by \"airlock snapshot\" instead of connecting")
	fs.StringVar(&opts.drift, "drift", "", "connect and report every difference from the snapshot FILE")
	fs.StringVar(&opts.baseline, "baseline", "", "a \"check --format json\" report FILE whose hazards are accepted")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if code := opts.validate(*asJSON, stderr); code != 0 {
		return code
	}
	var cfg *config.Config
	var err error
	if opts.snapshot != "" && *fromPath == "" {
		cfg, err = loadOfflineConfig(*cfgPath) // no credentials needed: nothing connects
	} else {
		cfg, err = loadSessionConfig(*cfgPath, *fromPath)
	}
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return cli.ExitConfig
	}
	if cmd == "" && !opts.printing() && wantTUI(stdin, stdout, *noTUI) {
		audit, err := openAudit(cfg)
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 1
		}
		defer audit.Close()
		go audit.CheckAll() // a damaged record anywhere: a red status once found
		m, err := newManager(cfg, session.Options{Audit: audit})
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return cli.ExitConfig
		}
		return runSession(ctx, m, ui.Options{Title: sessionTitle(cfg, *fromPath), NoBell: *noBell, NoNotify: *noNotify, NotifyCommand: cfg.NotifyCommand}, gatewayFor(*gatewayListen, cfg), stderr)
	}
	return runCheckReport(ctx, cfg, opts, stdout, stderr)
}

func check(ctx context.Context, m *session.Manager, asJSON bool, stdout, stderr io.Writer) int {
	opts := checkOptions{format: "text"}
	if asJSON {
		opts.format = "json"
	}
	return checkManager(ctx, m, opts, stdout, stderr)
}

func runDemo(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airlock demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the check view as JSON")
	noTUI := fs.Bool("no-tui", false, "print the check view instead of opening the TUI")
	gatewayListen := fs.String("gateway", "", "serve agents at ADDR (host:port) while the TUI runs")
	tour := fs.Bool("tour", false, "open the TUI with a guided tour: captioned steps, space/n advances")
	noBell := fs.Bool("no-bell", false, "do not ring the terminal bell when an agent's call or a server's request for input arrives")
	noNotify := fs.Bool("no-notify", false, "do not send a desktop notification (OSC 9/777, or [notify] command) when a question arrives while the terminal is not focused")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	set := demo.NewSet()
	cfg, err := withPolicy(demo.Config())
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return cli.ExitConfig
	}
	inproc := map[string]*mcp.Server{}
	for _, n := range demo.Names() {
		inproc[n] = set.Server(n)
	}
	pins, _ := pins.Open("") // every demo starts from a clean slate
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
		release, cleared, err := demo.ClaimState(dir)
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
		go audit.CheckAll()
		m := session.New(cfg, session.Options{InProcess: inproc, Pins: pins, Version: version, Audit: audit, MemoryTaint: true})
		gs := gatewayFor(*gatewayListen, cfg)
		gs.demo = true
		return runSession(ctx, m, ui.Options{Title: "demo", Demo: set.Notes().RugPull, Tour: *tour, NoBell: *noBell, NoNotify: *noNotify}, gs, stderr)
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
