package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/ui/cli"
)

// defaultGatewayListen is where the gateway listens when neither the config nor a
// flag says.
const defaultGatewayListen = "127.0.0.1:7878"

// gatewayTarget returns the listen address and state dir of the gateway a config
// describes, for the commands that talk to a running airlock.
func gatewayTarget(cfgPath string) (string, string, error) {
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		if cfgPath != "" {
			return "", "", err
		}
		// No config at the default path: the demo's gateway with the default state dir.
		cfg = config.Default()
		dir, derr := config.DefaultStateDir()
		if derr != nil {
			return "", "", derr
		}
		cfg.StateDir = dir
	}
	listen := defaultGatewayListen
	if cfg.Gateway != nil && cfg.Gateway.Listen != "" {
		listen = cfg.Gateway.Listen
	}
	return listen, cfg.StateDir, nil
}

const gatewayUsage = `usage: airlock gateway snippet claude|cursor|vscode [--env] [--config FILE] [--gateway ADDR]
       airlock gateway token --export [--config FILE]
       airlock gateway rotate-token [--config FILE]`

func runGateway(args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 {
		fmt.Fprintln(stderr, gatewayUsage)
		return 2
	}
	switch args[0] {
	case "snippet":
	case "token":
		return runGatewayToken(args[1:], stdout, stderr)
	case "rotate-token":
		return runRotateToken(args[1:], stdout, stderr)
	default:
		fmt.Fprintln(stderr, gatewayUsage)
		return 2
	}
	fs := flag.NewFlagSet("airlock gateway snippet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	listenFlag := fs.String("gateway", "", "gateway address (default from the config, else "+defaultGatewayListen+")")
	env := fs.Bool("env", false, "refer to the token as ${AIRLOCK_TOKEN} (safe to show on a projector); the export line comes from `airlock gateway token --export`")
	positional, err := parseInterleaved(fs, args[1:])
	if err != nil || len(positional) != 1 {
		fmt.Fprintln(stderr, gatewayUsage)
		return 2
	}
	listen, stateDir, err := gatewayTarget(*cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	if *listenFlag != "" {
		listen = *listenFlag
	}
	token, err := session.OpenGatewayToken(stateDir, noteTo(stderr, "airlock"))
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	self, _ := os.Executable()
	if *env {
		err = cli.WriteSnippetEnv(stdout, positional[0], "http://"+listen+"/mcp", self, tokenFlags(*cfgPath))
	} else {
		err = cli.WriteSnippet(stdout, positional[0], "http://"+listen+"/mcp", token, self)
	}
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 2
	}
	return 0
}

// tokenFlags are the flags that make `airlock gateway token` find the same token.
func tokenFlags(cfgPath string) string {
	if cfgPath == "" {
		return ""
	}
	return " --config " + cli.ShellQuote(cfgPath)
}

// runGatewayToken prints the shell line that puts the gateway token in
// AIRLOCK_TOKEN, for `eval "$(airlock gateway token --export)"`: the token reaches
// the agent's environment without being shown.
func runGatewayToken(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airlock gateway token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	export := fs.Bool("export", false, "print `export AIRLOCK_TOKEN=...` for eval in a shell")
	if err := fs.Parse(args); err != nil || !*export || fs.NArg() > 0 {
		fmt.Fprintln(stderr, gatewayUsage)
		return 2
	}
	_, stateDir, err := gatewayTarget(*cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	token, err := session.OpenGatewayToken(stateDir, noteTo(stderr, "airlock"))
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "export AIRLOCK_TOKEN=%s\n", cli.ShellQuote(token))
	return 0
}

// runRotateToken replaces the gateway token. A running airlock's gateway follows
// the token file and refuses the old token from its next request; agents need the
// new token (their config keeps working when it reads ${AIRLOCK_TOKEN}).
func runRotateToken(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airlock gateway rotate-token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		fmt.Fprintln(stderr, gatewayUsage)
		return 2
	}
	_, stateDir, err := gatewayTarget(*cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	if _, err := session.RotateToken(stateDir); err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "New gateway token written to %s (not shown).\n", session.TokenPath(stateDir))
	fmt.Fprintln(stdout, "A running airlock refuses the old token from the next request on; no restart needed.")
	fmt.Fprintf(stdout, "Give agents the new one: eval \"$(airlock gateway token --export%s)\" in the agent's shell, or a new `airlock gateway snippet`.\n", tokenFlags(*cfgPath))
	return 0
}

func runBridge(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airlock bridge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	listenFlag := fs.String("gateway", "", "gateway address of the running airlock")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	listen, stateDir, err := gatewayTarget(*cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "airlock bridge: %v\n", err)
		return 1
	}
	if *listenFlag != "" {
		listen = *listenFlag
	}
	token, err := session.OpenGatewayToken(stateDir, noteTo(stderr, "airlock bridge"))
	if err != nil {
		fmt.Fprintf(stderr, "airlock bridge: %v\n", err)
		return 1
	}
	if err := session.Bridge(ctx, "http://"+listen+"/mcp", token, io.NopCloser(stdin), nopWriteCloser{stdout}); err != nil {
		fmt.Fprintf(stderr, "airlock bridge: %v (is airlock running with its gateway on %s?)\n", err, listen)
		return 1
	}
	return 0
}

// noteTo prints a notice on w, prefixed with the command's name.
func noteTo(w io.Writer, prefix string) func(string) {
	return func(s string) { fmt.Fprintf(w, "%s: %s\n", prefix, s) }
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func runAudit(args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 || args[0] != "verify" {
		fmt.Fprintln(stderr, "usage: airlock audit verify [FILE] [--config FILE]")
		return 2
	}
	fs := flag.NewFlagSet("airlock audit verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	positional, err := parseInterleaved(fs, args[1:])
	if err != nil || len(positional) > 1 {
		return 2
	}
	path := ""
	if len(positional) == 1 {
		path = positional[0]
	} else {
		cfg, err := loadConfig(*cfgPath)
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 1
		}
		path = auditPath(cfg)
	}
	n, err := session.VerifyAuditFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "airlock audit verify: %s: FAILED after %d good records: %v\n", path, n, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d records, chain intact\n", path, n)
	return 0
}

// auditPath is the config's audit log, by default audit.jsonl in the state dir.
func auditPath(cfg *config.Config) string {
	if cfg.AuditPath != "" {
		return cfg.AuditPath
	}
	return filepath.Join(cfg.StateDir, "audit.jsonl")
}
