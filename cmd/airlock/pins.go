package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

func runPins(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: airlock pins list | airlock pins accept SERVER [TOOL]")
		return 2
	}
	sub := args[0]
	fs := flag.NewFlagSet("airlock pins "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	positional, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return 2
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return cli.ExitConfig
	}
	pins, err := openPins(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	switch sub {
	case "list":
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tTOOL\tSHA256\tPINNED")
		for _, p := range pins.List() {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", safetext.Inline(p.Server), safetext.Inline(p.Tool), p.Fingerprint[:min(16, len(p.Fingerprint))], p.PinnedAt.Format(time.DateTime))
		}
		tw.Flush()
		return 0
	case "accept":
		return acceptPins(ctx, cfg, pins, positional, stdout, stderr)
	}
	fmt.Fprintf(stderr, "airlock: unknown pins command %q\n", sub)
	return 2
}

// acceptPins connects to the one server and pins its current definitions (every tool,
// or the one named) and its instructions.
func acceptPins(ctx context.Context, cfg *config.Config, pins *session.Pins, args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 || len(args) > 2 {
		fmt.Fprintln(stderr, "usage: airlock pins accept SERVER [TOOL]")
		return 2
	}
	server := args[0]
	var only []config.Server
	for _, s := range cfg.Servers {
		if s.Name == server {
			only = append(only, s)
		}
	}
	if len(only) == 0 {
		fmt.Fprintf(stderr, "airlock: no server %q in the config\n", server)
		return 2
	}
	one := *cfg
	one.Servers = only
	m := session.New(&one, session.Options{Pins: pins, Version: version})
	defer m.Close()
	m.Start()
	if err := m.Wait(ctx); err != nil {
		return 1
	}
	tool := ""
	if len(args) == 2 {
		tool = args[1]
	}
	accepted, err := m.AcceptPins(server, tool)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %s\n", safetext.Inline(err.Error()))
		return 1
	}
	if len(accepted) == 0 {
		fmt.Fprintln(stdout, "Nothing had changed; nothing to accept.")
		return 0
	}
	for _, a := range accepted {
		fmt.Fprintf(stdout, "accepted %s\n", safetext.Inline(a))
	}
	return 0
}
