package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/charmbracelet/x/term"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/pins"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

const pinsUsage = "usage: airlock pins list | airlock pins accept SERVER [TOOL] [--sha256 PREFIX] [--instructions-sha256 PREFIX]"

func runPins(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, pinsUsage)
		return 2
	}
	sub := args[0]
	fs := flag.NewFlagSet("airlock pins "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	var bind reviewFlags
	if sub == "accept" {
		fs.StringVar(&bind.tool, "sha256", "", "the fingerprint (or its first 8+ digits) of the TOOL definition you reviewed")
		fs.StringVar(&bind.instructions, "instructions-sha256", "", "the fingerprint (or its first 8+ digits) of the server instructions you reviewed")
	}
	positional, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return 2
	}
	cfg, ok := configOrSay(*cfgPath, stderr)
	if !ok {
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
		for _, n := range pins.SharedNames() {
			fmt.Fprintf(stdout, "note: %s\n", safetext.Inline(n))
		}
		return 0
	case "accept":
		bind.interactive = isTerminal(stdin)
		bind.in = stdin
		return acceptPins(ctx, cfg, pins, positional, bind, stdout, stderr)
	}
	fmt.Fprintf(stderr, "airlock: unknown pins command %q\n", sub)
	return 2
}

// reviewFlags is how the person binds an acceptance to what they reviewed.
type reviewFlags struct {
	tool, instructions string
	interactive        bool
	in                 io.Reader
}

// isTerminal reports whether the reader or writer end is a terminal.
func isTerminal(end any) bool {
	f, ok := end.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// acceptPins connects to the one server, shows what changed since pinned (each
// changed tool's diff, changed instructions) with the fingerprints of what it serves
// now, and pins exactly that: bound by --sha256 (and --instructions-sha256) to the
// fingerprint the person reviewed, or by a yes on a terminal to what was just shown.
// If the server serves anything else by then, nothing is pinned.
func acceptPins(ctx context.Context, cfg *config.Config, pins *pins.Store, args []string, bind reviewFlags, stdout, stderr io.Writer) int {
	if len(args) < 1 || len(args) > 2 {
		fmt.Fprintln(stderr, pinsUsage)
		return 2
	}
	server := args[0]
	tool := ""
	if len(args) == 2 {
		tool = args[1]
	}
	if bind.tool != "" && tool == "" {
		fmt.Fprintln(stderr, "airlock: --sha256 binds one tool's definition: name the TOOL")
		return 2
	}
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
	snap := m.Snapshot()
	sv, ok := snap.Server(server)
	if !ok || sv.Status != model.StatusReady {
		fmt.Fprintf(stderr, "airlock: server %s is not connected: %s\n", server, safetext.Inline(errText(sv.Err)))
		return 1
	}
	shown := model.Reviewed{Tools: map[string]string{}}
	listed := false
	for _, ti := range snap.Tools {
		if ti.Ref.Server != server || (tool != "" && ti.Ref.Tool != tool) {
			continue
		}
		listed = true
		if ti.Pin != trust.PinChanged {
			continue
		}
		pinned, _ := m.PinnedDefinition(server, ti.Ref.Tool)
		fmt.Fprintf(stdout, "%s changed since pinned on %s\n  pinned sha256 %s\n  now    sha256 %s\n",
			safetext.Inline(ti.Ref.Qualified()), pinned.PinnedAt.Format(time.DateTime), pinned.Fingerprint, ti.Fingerprint)
		for _, l := range cli.PinDiff(pinned.Definition, ti.Raw) {
			fmt.Fprintln(stdout, "  "+l)
		}
		fmt.Fprintln(stdout)
		shown.Tools[ti.Ref.Tool] = ti.Fingerprint
	}
	if tool != "" && !listed {
		fmt.Fprintf(stderr, "airlock: server %s lists no tool %q\n", server, safetext.Inline(tool))
		return 1
	}
	if sv.InstructionsChanged && tool == "" {
		fp := trust.InstructionsFingerprint(sv.Instructions)
		fmt.Fprintf(stdout, "%s's instructions changed since pinned; they are now (sha256 %s):\n", server, fp)
		for _, l := range strings.Split(sv.Instructions, "\n") {
			fmt.Fprintln(stdout, "  │ "+safetext.Inline(l))
		}
		fmt.Fprintln(stdout)
		shown.Instructions = fp
	}
	if len(shown.Tools) == 0 && shown.Instructions == "" {
		fmt.Fprintln(stdout, "Nothing had changed; nothing to accept.")
		return 0
	}
	var reviewed model.Reviewed
	switch {
	case bind.tool != "" || bind.instructions != "":
		reviewed = model.Reviewed{Instructions: bind.instructions}
		if bind.tool != "" {
			reviewed.Tools = map[string]string{tool: bind.tool}
		}
	case bind.interactive:
		fmt.Fprint(stderr, "Pin exactly what is shown above? [y/N] ")
		line, _ := bufio.NewReader(bind.in).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(stdout, "Nothing pinned.")
			return 1
		}
		reviewed = shown
	default:
		var hints []string
		for name, fp := range shown.Tools {
			hints = append(hints, name+" --sha256 "+shortFP(fp))
		}
		sort.Strings(hints)
		if shown.Instructions != "" {
			hints = append(hints, "--instructions-sha256 "+shortFP(shown.Instructions))
		}
		hint := strings.Join(hints, "\n  or: airlock pins accept "+server+" ")
		fmt.Fprintf(stderr, "airlock: nothing pinned: review the change above, then bind the acceptance to it: airlock pins accept %s %s\n", server, hint)
		return 1
	}
	accepted, err := m.AcceptPins(server, reviewed)
	if err != nil {
		return failed(err, stderr)
	}
	if len(accepted) == 0 {
		fmt.Fprintln(stdout, "Nothing that was reviewed is still changed; nothing pinned.")
		return 0
	}
	for _, a := range accepted {
		fmt.Fprintf(stdout, "accepted %s\n", safetext.Inline(a))
	}
	return 0
}

func shortFP(fp string) string { return fp[:min(12, len(fp))] }
