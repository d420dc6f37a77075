package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/conn"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

// defaultGatewayListen is where the gateway listens when neither the config nor a
// flag says.
const defaultGatewayListen = "127.0.0.1:7878"

// gatewayTarget returns the listen address and state dir of the gateway a config
// describes, for the commands that talk to a running airlock. demo, or no config at
// the default path, selects the demo's: the default listen address and the demo
// folder of the default state dir.
func gatewayTarget(cfgPath string, demo bool) (string, string, error) {
	cfg, err := targetConfig(cfgPath, demo)
	if err != nil {
		return "", "", err
	}
	listen := defaultGatewayListen
	if cfg.Gateway != nil && cfg.Gateway.Listen != "" {
		listen = cfg.Gateway.Listen
	}
	if addr, ok := recordedGatewayAddr(cfg.StateDir); ok {
		listen = addr // where the running gateway actually listens
	}
	return listen, cfg.StateDir, nil
}

// gatewayToken is gatewayTarget's listen address (listenFlag instead when it is
// set) and the token in its state dir, for the commands that print how an agent
// reaches the gateway; a notice about the token file is said on stderr.
func gatewayToken(cfgPath string, demo bool, listenFlag string, stderr io.Writer) (listen, token string, err error) {
	listen, stateDir, err := gatewayTarget(cfgPath, demo)
	if err != nil {
		return "", "", err
	}
	token, err = gateway.ReadToken(stateDir, noteTo(stderr, "airlock"))
	return cmp.Or(listenFlag, listen), token, err
}

const gatewayUsage = `usage: airlock gateway snippet claude|codex|gemini|cursor|vscode [--env] [--config FILE | --demo] [--gateway ADDR]
       airlock gateway token --export [--config FILE | --demo]
       airlock gateway token add NAME [--export] [--config FILE | --demo]
       airlock gateway token list [--config FILE | --demo]
       airlock gateway token revoke NAME [--config FILE | --demo]
       airlock gateway rotate-token [--config FILE | --demo]`

// targetConfig is the config a command about a running airlock looks at: --config or
// the default one, or the demo's (with --demo, or when there is no config at the
// default path).
func targetConfig(cfgPath string, demo bool) (*config.Config, error) {
	if !demo {
		cfg, err := loadConfig(cfgPath)
		if err == nil || cfgPath != "" {
			return cfg, err
		}
		if _, statErr := os.Stat(defaultConfigPath()); !errors.Is(statErr, fs.ErrNotExist) {
			return nil, err // a config that does not load is an error, not the demo
		}
	}
	dir, err := demoStateDir()
	if err != nil {
		return nil, err
	}
	cfg := config.Default()
	cfg.StateDir = dir
	return withPolicy(cfg)
}

func defaultConfigPath() string {
	p, _ := config.DefaultPath()
	return p
}

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
	demo := fs.Bool("demo", false, "the gateway of a running \"airlock demo\" (its token is in the demo folder of the state dir)")
	listenFlag := fs.String("gateway", "", "gateway address (default from the config, else "+defaultGatewayListen+")")
	env := fs.Bool("env", false, "refer to the token as ${AIRLOCK_TOKEN} (safe to show on a projector); the export line comes from \"airlock gateway token --export\"")
	positional, err := parseInterleaved(fs, args[1:])
	if err != nil || len(positional) != 1 {
		fmt.Fprintln(stderr, gatewayUsage)
		return 2
	}
	listen, token, err := gatewayToken(*cfgPath, *demo, *listenFlag, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	self, _ := os.Executable()
	// The bridge line finds the same gateway: the same demo or config, and the
	// address when it was given here.
	var bridgeArgs []string
	if *demo {
		bridgeArgs = append(bridgeArgs, "--demo")
	}
	if *cfgPath != "" {
		bridgeArgs = append(bridgeArgs, "--config", absPath(*cfgPath))
	}
	if *listenFlag != "" {
		bridgeArgs = append(bridgeArgs, "--gateway", listen)
	}
	// The export line finds the same token from any folder, as the bridge line does.
	cfgFlags := tokenFlags(*cfgPath, *demo)
	// Codex's and Gemini's own tool-call timeouts follow this config's approval_timeout.
	var approval time.Duration
	if positional[0] == "codex" || positional[0] == "gemini" {
		cfg, cerr := targetConfig(*cfgPath, *demo)
		if cerr != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", cerr)
			return 1
		}
		approval = cfg.ApprovalTimeout
	}
	url := "http://" + listen + "/mcp"
	switch {
	case positional[0] == "codex":
		err = cli.WriteCodexSnippet(stdout, url, cfgFlags, approval, self, bridgeArgs...)
	case positional[0] == "gemini" && *env:
		err = cli.WriteGeminiSnippetEnv(stdout, url, self, cfgFlags, approval, bridgeArgs...)
	case positional[0] == "gemini":
		err = cli.WriteGeminiSnippet(stdout, url, token, self, approval, bridgeArgs...)
	case *env:
		err = cli.WriteSnippetEnv(stdout, positional[0], url, self, cfgFlags, bridgeArgs...)
	default:
		err = cli.WriteSnippet(stdout, positional[0], url, token, self, bridgeArgs...)
	}
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 2
	}
	return 0
}

// absPath is path made absolute ("" stays ""; one that cannot be made absolute
// stays as it is).
func absPath(path string) string {
	if path == "" {
		return ""
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// tokenFlags are the flags that make `airlock gateway token` find the same token,
// from whichever folder the agent's shell is in (the config's path made absolute).
func tokenFlags(cfgPath string, demo bool) string {
	switch {
	case demo:
		return " --demo"
	case cfgPath != "":
		return " --config " + cli.ShellQuote(absPath(cfgPath))
	}
	return ""
}

// runGatewayToken prints the shell line that puts the gateway token in
// AIRLOCK_TOKEN, for `eval "$(airlock gateway token --export)"`: the token reaches
// the agent's environment without being shown. `add`, `list` and `revoke` manage
// the named agent tokens (gateway.AddToken): each is its agent's identity.
func runGatewayToken(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airlock gateway token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	demo := fs.Bool("demo", false, "the token of \"airlock demo\" (in the demo folder of the state dir)")
	export := fs.Bool("export", false, "print \"export AIRLOCK_TOKEN=...\" for eval in a shell (the default token, or with add the new one)")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		fmt.Fprintln(stderr, gatewayUsage)
		return 2
	}
	if len(positional) > 0 {
		return runNamedTokens(positional, *export, *cfgPath, *demo, stdout, stderr)
	}
	if !*export {
		fmt.Fprintln(stderr, gatewayUsage)
		return 2
	}
	_, token, err := gatewayToken(*cfgPath, *demo, "", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "export AIRLOCK_TOKEN=%s\n", cli.ShellQuote(token))
	return 0
}

// runNamedTokens is `airlock gateway token add NAME | list | revoke NAME`.
func runNamedTokens(positional []string, export bool, cfgPath string, demo bool, stdout, stderr io.Writer) int {
	sub := positional[0]
	switch {
	case sub == "add" && len(positional) == 2, sub == "revoke" && len(positional) == 2 && !export, sub == "list" && len(positional) == 1 && !export:
	default:
		fmt.Fprintln(stderr, gatewayUsage)
		return 2
	}
	cfg, err := targetConfig(cfgPath, demo)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	dir := cfg.StateDir
	switch sub {
	case "list":
		list, err := gateway.ListTokens(dir)
		if err != nil {
			return failed(err, stderr)
		}
		lines := make([]cli.TokenLine, len(list))
		for i, t := range list {
			lines[i] = cli.TokenLine{Name: t.Name, Context: gateway.AgentContext(t.Name), Created: t.Created}
		}
		def := cli.TokenLine{Name: gateway.DefaultTokenName, Context: gateway.AgentContext(gateway.DefaultTokenName)}
		cli.WriteTokenList(stdout, def, lines, gateway.TokenPath(dir))
		return 0
	case "add":
		name := positional[1]
		tok, err := gateway.AddToken(dir, name, time.Now())
		if err != nil {
			return failed(err, stderr)
		}
		auditToken(cfg, "token-added", name, "the person added the gateway token "+name+" (its agents' context is "+gateway.AgentContext(name)+")", stderr)
		if export {
			fmt.Fprintf(stdout, "export AIRLOCK_TOKEN=%s\n", cli.ShellQuote(tok))
			return 0
		}
		fmt.Fprintf(stdout, "%s\n", tok)
		fmt.Fprintf(stderr, "airlock: added the gateway token %s; it is shown once (airlock keeps only its SHA-256 in %s). Its agents' taint and grants are %s's, whatever client name they give.\n",
			name, gateway.TokensPath(dir), gateway.AgentContext(name))
		return 0
	default: // revoke
		name := positional[1]
		if err := gateway.RevokeToken(dir, name); err != nil {
			return failed(err, stderr)
		}
		auditToken(cfg, "token-revoked", name, "the person revoked the gateway token "+name+": its sessions end and their waiting calls are withdrawn", stderr)
		fmt.Fprintf(stdout, "revoked the gateway token %s; a running airlock refuses it from the next request and ends its sessions within a second (their waiting questions are withdrawn)\n", name)
		return 0
	}
}

// auditToken appends a record of a change to the named tokens to the config's
// audit log; a log that cannot take it is said, not fatal (the change is made).
func auditToken(cfg *config.Config, kind, name, reason string, stderr io.Writer) {
	log, err := openAudit(cfg)
	if err == nil {
		err = log.Append(audit.Record{TS: time.Now().UTC(), Kind: kind, Context: gateway.AgentContext(name), DecidedBy: string(trust.DecidedByPerson), Reason: reason})
		log.Close()
	}
	if err != nil {
		fmt.Fprintf(stderr, "airlock: warning: the audit log did not record it: %s\n", safetext.Inline(err.Error()))
	}
}

// runRotateToken replaces the gateway token. A running airlock's gateway follows
// the token file and refuses the old token from its next request; agents need the
// new token (their config keeps working when it reads ${AIRLOCK_TOKEN}).
func runRotateToken(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airlock gateway rotate-token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	demo := fs.Bool("demo", false, "the token of \"airlock demo\" (in the demo folder of the state dir)")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		fmt.Fprintln(stderr, gatewayUsage)
		return 2
	}
	_, stateDir, err := gatewayTarget(*cfgPath, *demo)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	if _, err := gateway.RotateToken(stateDir); err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "New gateway token written to %s (not shown).\n", gateway.TokenPath(stateDir))
	fmt.Fprintln(stdout, "A running airlock refuses the old token from the next request on; no restart needed.")
	fmt.Fprintf(stdout, "Give agents the new one: eval \"$(airlock gateway token --export%s)\" in the agent's shell, or a new `airlock gateway snippet`.\n", tokenFlags(*cfgPath, *demo))
	return 0
}

func runBridge(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airlock bridge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	demo := fs.Bool("demo", false, "bridge to a running \"airlock demo\"")
	listenFlag := fs.String("gateway", "", "gateway address of the running airlock")
	tokenEnv := fs.String("token-env", "", "take the gateway token from this environment variable (e.g. AIRLOCK_TOKEN, for a named token from `airlock gateway token add`) instead of the default token file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	listen, stateDir, err := gatewayTarget(*cfgPath, *demo)
	if err != nil {
		fmt.Fprintf(stderr, "airlock bridge: %v\n", err)
		return 1
	}
	listen = cmp.Or(*listenFlag, listen)
	var token string
	if *tokenEnv != "" {
		if token = os.Getenv(*tokenEnv); token == "" {
			fmt.Fprintf(stderr, "airlock bridge: --token-env %s: the variable is not set or empty\n", safetext.Inline(*tokenEnv))
			return 1
		}
	} else if token, err = gateway.ReadToken(stateDir, noteTo(stderr, "airlock bridge")); err != nil {
		fmt.Fprintf(stderr, "airlock bridge: %v\n", err)
		return 1
	}
	if err := gateway.Bridge(ctx, gateway.Link{Client: conn.OriginBoundClient, MaxMessageBytes: conn.MaxMessageBytes}, "http://"+listen+"/mcp", token, io.NopCloser(stdin), nopWriteCloser{stdout}); err != nil {
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

// exitNoAuditLog is the exit code of `airlock audit verify` when there is no audit
// log at the path it was pointed at.
const exitNoAuditLog = 7

func runAudit(args []string, stdout, stderr io.Writer) int {
	const use = "usage: airlock audit verify [FILE] [--config FILE | --demo] | airlock audit seal --start-new [FILE] [--config FILE | --demo]"
	if len(args) < 1 || args[0] != "verify" && args[0] != "seal" {
		fmt.Fprintln(stderr, use)
		return 2
	}
	name := "airlock audit " + args[0]
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	demo := fs.Bool("demo", false, "the audit log of \"airlock demo\" (in the demo folder of the state dir)")
	startNew := false
	if args[0] == "seal" {
		fs.BoolVar(&startNew, "start-new", false, "move the log aside, whole, and start a new one whose first record names it (required)")
	}
	positional, err := parseInterleaved(fs, args[1:])
	if err != nil || len(positional) > 1 {
		return 2
	}
	if args[0] == "seal" && !startNew {
		fmt.Fprintln(stderr, name+": say --start-new: the log is moved aside (nothing is deleted) and a new one started")
		return 2
	}
	path := ""
	if len(positional) == 1 {
		path = positional[0]
	} else {
		cfg, err := targetConfig(*cfgPath, *demo)
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 1
		}
		path = auditPath(cfg)
	}
	if args[0] == "seal" {
		return runAuditSeal(path, stdout, stderr)
	}
	sum, err := audit.VerifyLog(path)
	if errors.Is(err, audit.ErrNoLog) {
		// Nothing to seal: the path is likely not the log the person meant.
		fmt.Fprintf(stderr, "%s: there is no audit log at %s (no file, segment or head of it); name the session's config with --config FILE, the demo's log with --demo, or the log itself as FILE\n", name, safetext.Inline(path))
		return exitNoAuditLog
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s: FAILED after %d good records: %s\n", name, path, sum.Records, safetext.Inline(err.Error()))
		fmt.Fprintf(stderr, "%s: airlock adds nothing to a log whose end is damaged; to go on, `airlock audit seal --start-new` moves it aside, whole, and starts a new one\n", name)
		return 1
	}
	if sum.HeadMissing && sum.Records > 0 {
		fmt.Fprintf(stderr, "%s: warning: %s.head is missing: records removed from the end of the log cannot be detected\n", name, path)
	}
	files := ""
	if sum.Files > 1 {
		files = fmt.Sprintf(" across %d files (%d closed segments and the current one)", sum.Files, sum.Files-1)
	}
	fmt.Fprintf(stdout, "%s: %d records, chain intact%s\n", path, sum.Records, files)
	if sum.Sealed != nil {
		fmt.Fprintf(stdout, "it begins after %s, which `airlock audit seal --start-new` moved aside at its record %d (verify that one on its own)\n", safetext.Inline(sum.Sealed.File), sum.Sealed.Seq)
	}
	if sum.Records > 0 {
		// Written down where airlock cannot write (a note, a ticket, another machine),
		// the head lets a later verify show that nothing before it was rewritten.
		fmt.Fprintf(stdout, "head: %d records, last hash %s (keep this line elsewhere to anchor the log)\n", sum.Records, sum.LastHash)
	}
	return 0
}

// runAuditSeal moves the audit log at path aside and starts a new one.
func runAuditSeal(path string, stdout, stderr io.Writer) int {
	s, err := audit.Seal(path)
	if err != nil {
		fmt.Fprintf(stderr, "airlock audit seal: %s\n", safetext.Inline(err.Error()))
		return 1
	}
	found := fmt.Sprintf("it verified: %d records", s.Verified.Records)
	if s.Problem != nil {
		found = fmt.Sprintf("verify found %d good records, then: %s", s.Verified.Records, safetext.Inline(s.Problem.Error()))
	}
	fmt.Fprintf(stdout, "moved %s (with its head and segments) aside to %s; %s\n", path, s.MovedTo, found)
	fmt.Fprintf(stdout, "started a new log %s; its first record names the old one and its head (record %d, hash %s)\n", path, s.First.Previous.Seq, s.First.Previous.Hash)
	return 0
}

// auditPath is the config's audit log, by default audit.jsonl in the state dir.
func auditPath(cfg *config.Config) string {
	if cfg.AuditPath != "" {
		return cfg.AuditPath
	}
	return filepath.Join(cfg.StateDir, "audit.jsonl")
}
