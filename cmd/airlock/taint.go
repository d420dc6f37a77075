package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

// runTaint lists the tainted contexts kept in the state dir, or clears one (or all):
// only the person clears a taint, and each clear is audited. A running airlock sees
// the change on its next decision.
func runTaint(args []string, stdout, stderr io.Writer) int {
	const use = "usage: airlock taint list | airlock taint clear [CONTEXT] [--config FILE]"
	sub, positional, cfg, code := configSubcommand("taint", use, args, stderr)
	if code >= 0 {
		return code
	}
	switch {
	case sub == "list" && len(positional) == 0:
		list, err := approval.ListTaints(cfg.StateDir)
		if err != nil {
			return failed(err, stderr)
		}
		if len(list) == 0 {
			fmt.Fprintln(stdout, "No context is tainted.")
			return 0
		}
		tw := tabwriter.NewWriter(stdout, 0, 2, 2, ' ', 0)
		fmt.Fprintln(tw, "CONTEXT\tTAINTED BY\tCALL\tAT")
		for _, c := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", safetext.Inline(c.Context), safetext.Inline(c.Taint.By.Qualified()),
				safetext.Inline(c.Taint.CallID), c.Taint.At.Local().Format(time.DateTime))
		}
		tw.Flush()
		return 0
	case sub == "clear" && len(positional) <= 1:
		ctxName := ""
		if len(positional) == 1 {
			ctxName = positional[0]
		}
		audit, err := openAudit(cfg)
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 1
		}
		defer audit.Close()
		cleared, err := approval.ClearTaints(cfg.StateDir, ctxName, audit)
		if err != nil {
			return failed(err, stderr)
		}
		if len(cleared) == 0 {
			fmt.Fprintln(stdout, "No context is tainted.")
		}
		for _, c := range cleared {
			fmt.Fprintf(stdout, "cleared the taint of %s\n", safetext.Inline(c))
		}
		return 0
	}
	fmt.Fprintln(stderr, use)
	return 2
}
