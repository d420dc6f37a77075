package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

// runRules is `airlock rules list | revoke ID`: the remembered decisions airlock
// keeps in rules.toml (docs/rules.md). Rules in config.toml are the person's own and
// are listed by `check --json`.
func runRules(args []string, stdout, stderr io.Writer) int {
	const use = "usage: airlock rules list | airlock rules revoke ID [--config FILE]"
	sub, positional, cfg, code := configSubcommand("rules", use, args, stderr)
	if code >= 0 {
		return code
	}
	path, err := session.RulesPath(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	switch {
	case sub == "list" && len(positional) == 0:
		list, err := session.ListRules(path)
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %s\n", safetext.Inline(err.Error()))
			return 1
		}
		if len(list) == 0 {
			fmt.Fprintf(stdout, "No remembered decisions (%s).\n", safetext.Inline(path))
			return 0
		}
		tw := tabwriter.NewWriter(stdout, 0, 2, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTOOL\tPOLICY\tWHEN\tFROM\tSAVED")
		for _, r := range list {
			when := session.DescribeWhen(r.When)
			if r.Problem != "" {
				when += " (never applies: " + r.Problem + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", safetext.Inline(r.ID), safetext.Inline(r.Ref().Qualified()), safetext.Inline(r.Policy),
				safetext.Inline(when), safetext.Inline(r.From), r.Created.Local().Format(time.DateTime))
		}
		tw.Flush()
		return 0
	case sub == "revoke" && len(positional) == 1:
		audit, err := openAudit(cfg)
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 1
		}
		defer audit.Close()
		sr, err := session.RevokeRule(path, positional[0], audit)
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %s\n", safetext.Inline(err.Error()))
			return 1
		}
		fmt.Fprintf(stdout, "revoked %s (%s %s when %s)\n", safetext.Inline(sr.ID), safetext.Inline(sr.Policy),
			safetext.Inline(sr.Ref().Qualified()), safetext.Inline(session.DescribeWhen(sr.When)))
		return 0
	}
	fmt.Fprintln(stderr, use)
	return 2
}
