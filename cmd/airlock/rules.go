package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

// runRules is `airlock rules list | revoke ID`: list lists every rule in effect (the
// config's with file and line, the remembered decisions airlock keeps in rules.toml
// with their id); revoke removes a remembered one (docs/rules.md). Rules in
// config.toml are the person's own: airlock never writes them.
func runRules(args []string, stdout, stderr io.Writer) int {
	const use = "usage: airlock rules list | airlock rules revoke ID [--config FILE]"
	sub, positional, cfg, code := configSubcommand("rules", use, args, stderr)
	if code >= 0 {
		return code
	}
	path, err := approval.RulesPath(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	switch {
	case sub == "list" && len(positional) == 0:
		return listRules(cfg, path, stdout, stderr)
	case sub == "revoke" && len(positional) == 1:
		audit, err := openAudit(cfg)
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 1
		}
		defer audit.Close()
		sr, err := approval.RevokeRule(path, positional[0], audit)
		if err != nil {
			return failed(err, stderr)
		}
		fmt.Fprintf(stdout, "revoked %s (%s %s when %s)\n", safetext.Inline(sr.ID), safetext.Inline(sr.Policy),
			safetext.Inline(sr.Ref().Qualified()), safetext.Inline(trust.DescribeWhen(sr.When)))
		return 0
	}
	fmt.Fprintln(stderr, use)
	return 2
}

// listRules writes every rule in effect, config's first (server by server, in config
// order), then the remembered ones: effect, conditions, where it was written, how
// often it matched and when it last did (from the audit log, so every airlock
// process that shares it counts).
func listRules(cfg *config.Config, path string, stdout, stderr io.Writer) int {
	list, err := approval.ListRules(path)
	if err != nil {
		return failed(err, stderr)
	}
	uses, uerr := approval.RuleUses(auditPath(cfg))
	if uerr != nil {
		fmt.Fprintf(stderr, "airlock: %s (match counts may be short)\n", safetext.Inline(uerr.Error()))
	}
	last := func(name string) (string, string) {
		u := uses[name]
		if u.Matched == 0 {
			return "0", "-"
		}
		return strconv.Itoa(u.Matched), u.LastMatch.Local().Format(time.DateTime)
	}
	tw := tabwriter.NewWriter(stdout, 0, 2, 2, ' ', 0)
	rows := 0
	header := func() {
		if rows == 0 {
			fmt.Fprintln(tw, "RULE\tTOOL\tEFFECT\tWHEN\tMATCHED\tLAST MATCH\tWRITTEN")
		}
		rows++
	}
	for _, s := range cfg.Servers {
		for _, tool := range slices.Sorted(maps.Keys(s.Tools)) {
			for _, r := range s.Tools[tool].Rules {
				header()
				n, at := last(r.Name)
				when := trust.DescribeWhen(approval.WhenOf(r))
				if r.Reason != "" {
					when += " (" + r.Reason + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", safetext.Inline(r.Name), safetext.Inline(trust.Ref{Server: s.Name, Tool: tool}.Qualified()),
					r.Policy, safetext.Inline(when), n, at, safetext.Inline(r.Source))
			}
		}
	}
	for _, r := range list {
		header()
		n, at := last(r.ID)
		when := trust.DescribeWhen(r.When)
		if r.Problem != "" {
			when += " (broken, so every call of the tool asks: " + r.Problem + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", safetext.Inline(r.ID), safetext.Inline(r.Ref().Qualified()), safetext.Inline(r.Policy),
			safetext.Inline(when), n, at, safetext.Inline(approval.RulesFile+", "+r.From+", "+r.Created.Local().Format(time.DateTime)))
	}
	tw.Flush()
	if len(list) == 0 {
		fmt.Fprintf(stdout, "No remembered decisions (%s).\n", safetext.Inline(path))
	}
	return 0
}
