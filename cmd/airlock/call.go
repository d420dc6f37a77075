package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	auditpkg "github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/form"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

func runCall(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airlock call", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	argJSON := fs.String("args", "{}", "arguments as a JSON object")
	yes := fs.Bool("yes", false, "allow a call that asks, once, without a prompt")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	// asNamed is the one name given (SERVER__TOOL, or the gateway's served name).
	asNamed := ""
	if len(positional) == 1 {
		asNamed = positional[0]
		// SERVER__TOOL, the name shown everywhere.
		if s, t, ok := strings.Cut(positional[0], "__"); ok && s != "" && t != "" {
			positional = []string{s, t}
		}
	}
	if len(positional) != 2 {
		fmt.Fprintln(stderr, "usage: airlock call SERVER__TOOL | SERVER TOOL [--args JSON] [--yes] [--config FILE] (airlock call --help)")
		return 2
	}
	if argsRefused(*argJSON, stderr) {
		return 2
	}
	cfg, ok := configOrSay(*cfgPath, stderr)
	if !ok {
		return cli.ExitConfig
	}
	if *yes && cfg.Managed != nil && !cfg.Managed.AllowYes {
		fmt.Fprintf(stderr, "airlock: --yes is not allowed: the team policy says allow_yes_flag = false (%s); answer the question on a terminal instead\n", cfg.Managed.YesSource)
		return 2
	}
	notices, done := startRun(cfg.StateDir, "airlock call", true)
	defer done()
	for _, s := range notices {
		fmt.Fprintf(stderr, "airlock: warning: %s\n", s)
	}
	interactive := isTerminal(stdin)
	audit, err := openAudit(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	defer func() {
		// Close writes the head: a head that could not be written is said, not
		// left to lag unseen.
		audit.Close()
		if p := audit.Problem(); errors.Is(p, auditpkg.ErrHeadNotWritten) {
			auditNotice(stderr, "airlock", audit)
		}
	}()
	auditNotice(stderr, "airlock", audit)
	// A server's elicitation or sampling request during the call is asked on the
	// terminal, or declined at once without one: never a silent wait.
	asker := cli.Asker{In: stdin, Out: stderr, Interactive: interactive, Trust: trustOf(cfg)}
	if f, ok := stdin.(*os.File); ok && interactive {
		asker.Drain = drainInput(f)
	}
	m, ok := startOneShot(cfg, session.Options{Audit: audit, Approver: cli.Prompter{In: stdin, Out: stderr, Interactive: interactive, Yes: *yes}, Asker: asker}, stderr)
	if !ok {
		return cli.ExitConfig
	}
	defer m.Close()
	if err := m.Wait(ctx); err != nil {
		return 1
	}
	// A state file airlock cannot read is never taken as empty: say so before the
	// call, which then asks as the file might have made it ask.
	for _, p := range m.StateFileProblems() {
		fmt.Fprintf(stderr, "airlock: error: %s\n", safetext.Inline(p))
	}
	server, tool := positional[0], positional[1]
	served := ""
	if _, ok := m.Snapshot().Tool(server, tool); !ok && asNamed != "" {
		// The name an agent calls it by: the gateway serves a long or dotted
		// SERVER__TOOL under a name of its own (see airlock check).
		if ti, ok := m.Snapshot().ToolByServedName(asNamed); ok {
			server, tool, served = ti.Ref.Server, ti.Ref.Tool, asNamed
		}
	}
	if sv, ok := m.Snapshot().Server(server); ok && sv.Status != model.StatusReady {
		fmt.Fprintf(stderr, "airlock: server %s is %s: %s\n", server, sv.Status, safetext.Inline(errText(sv.Err)))
		return cli.ExitServerFailed
	}
	if ti, ok := m.Snapshot().Tool(server, tool); ok {
		// Checked like the call form checks, before anything is sent.
		if err := form.CheckArgs(ti.InputSchema, json.RawMessage(*argJSON)); err != nil {
			fmt.Fprintf(stderr, "airlock: --args do not match %s__%s's input schema: %s\n", server, tool, safetext.Inline(err.Error()))
			return 2
		}
	}
	out, err := m.Call(ctx, model.CallRequest{Server: server, Tool: tool, Served: served, Args: json.RawMessage(*argJSON)})
	if code := failedCode(err, stderr); code != 0 {
		return code
	}
	cli.WriteResult(stdout, out.Result)
	fmt.Fprintln(stderr, cli.DecidedLine(out.Verdict, out.Duration))
	if out.Verdict.By == trust.DecidedByRule && len(out.Verdict.Reasons) > 0 {
		fmt.Fprintf(stderr, "(%s)\n", safetext.Inline(out.Verdict.Reasons[0]))
	}
	if out.Result.IsError {
		return 6
	}
	return 0
}

// trustOf names a configured server's trust.
func trustOf(cfg *config.Config) func(string) string {
	return func(name string) string {
		for _, s := range cfg.Servers {
			if s.Name == name {
				return s.Trust.String()
			}
		}
		return ""
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// configSubcommand parses `airlock NAME SUB [--config FILE] ARGS…` (a subcommand
// whose only flag is --config) and loads the config. It returns the subcommand, the
// positional arguments and the config, or an exit code other than -1 after printing
// why (use, a flag error or a config error).
func configSubcommand(name, use string, args []string, stderr io.Writer) (sub string, positional []string, cfg *config.Config, code int) {
	if len(args) == 0 {
		fmt.Fprintln(stderr, use)
		return "", nil, nil, 2
	}
	sub = args[0]
	fs := flag.NewFlagSet("airlock "+name+" "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	positional, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return "", nil, nil, 2
	}
	cfg, err = loadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return "", nil, nil, cli.ExitConfig
	}
	return sub, positional, cfg, -1
}

// parseInterleaved lets flags follow positional arguments (airlock call web fetch_url --args ...).
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}
