package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

// runRead is `airlock read SERVER URI`: one resources/read through the engine.
func runRead(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runChannel(ctx, "read", "usage: airlock read SERVER URI [--yes] [--config FILE] (airlock read --help)", args, stdin, stdout, stderr)
}

// runPrompt is `airlock prompt SERVER NAME --args JSON`: one prompts/get through
// the engine.
func runPrompt(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runChannel(ctx, "prompt", "usage: airlock prompt SERVER NAME [--args JSON] [--yes] [--config FILE] (airlock prompt --help)", args, stdin, stdout, stderr)
}

// runChannel runs read or prompt like runCall runs a call: the same config, audit
// log, y/N question on a terminal (denied without one unless --yes) and exit codes
// (5 denied, 1 failed).
func runChannel(ctx context.Context, cmd, usage string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airlock "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	var argJSON *string
	if cmd == "prompt" {
		argJSON = fs.String("args", "{}", "the prompt's arguments as a JSON object of strings")
	}
	yes := fs.Bool("yes", false, "allow a "+cmd+" that asks, once, without a prompt")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(positional) != 2 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	if argJSON != nil && argsRefused(*argJSON, stderr) {
		return 2
	}
	cfg, ok := configOrSay(*cfgPath, stderr)
	if !ok {
		return cli.ExitConfig
	}
	interactive := isTerminal(stdin)
	audit, err := openAudit(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	defer audit.Close()
	auditNotice(stderr, "airlock", audit)
	m, ok := startOneShot(cfg, session.Options{Audit: audit, Approver: cli.Prompter{In: stdin, Out: stderr, Interactive: interactive, Yes: *yes}}, stderr)
	if !ok {
		return cli.ExitConfig
	}
	defer m.Close()
	if err := m.Wait(ctx); err != nil {
		return 1
	}
	server := positional[0]
	if sv, ok := m.Snapshot().Server(server); ok && sv.Status != model.StatusReady {
		fmt.Fprintf(stderr, "airlock: server %s is %s: %s\n", server, sv.Status, safetext.Inline(errText(sv.Err)))
		return cli.ExitServerFailed
	}
	var (
		v       trust.Verdict
		dur     time.Duration
		tainted bool
	)
	if cmd == "read" {
		var out *model.ReadOutcome
		out, err = m.ReadResource(ctx, model.ReadRequest{Server: server, URI: positional[1]})
		if err == nil {
			cli.WriteResource(stdout, out.Result)
			v, dur, tainted = out.Verdict, out.Duration, out.Tainted
		}
	} else {
		var out *model.PromptOutcome
		out, err = m.GetPrompt(ctx, model.PromptRequest{Server: server, Name: positional[1], Args: json.RawMessage(*argJSON)})
		if err == nil {
			cli.WritePrompt(stdout, out.Result)
			v, dur, tainted = out.Verdict, out.Duration, out.Tainted
		}
	}
	if code := failedCode(err, stderr); code != 0 {
		return code
	}
	fmt.Fprintln(stderr, cli.DecidedLine(v, dur))
	if tainted {
		fmt.Fprintf(stderr, "(%s)\n", safetext.Inline(m.Engine().Taint("").Reason()))
	}
	return 0
}
