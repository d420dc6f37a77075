package main

import (
	"errors"
	"fmt"
	"strings"
)

// The markers around the part of README.md's "## Measured" section that the full
// bench/run writes.
const (
	measuredBegin = "<!-- measured: begin (bench/run writes this) -->"
	measuredEnd   = "<!-- measured: end -->"
)

// summaryPart is one row in a bullet of README's summary: before, the row's figure
// (its brief, else its result), then its id, goal and verdict.
type summaryPart struct{ id, before string }

// summaryBullets are the bullets of README's summary, in order.
var summaryBullets = []struct {
	label string
	parts []summaryPart
}{
	{"`airlock check`, one stdio server", []summaryPart{{"1a", "against a bare go-sdk client"}, {"1b", "against the MCP Inspector CLI"}}},
	{"connect fan-out", []summaryPart{{"2c", "20 stdio servers all ready in"}}},
	{"10,000 tools", []summaryPart{{"4c", "classification and toolset hazards"}, {"5e", "the TUI"}, {"5g", "on screen from start in"}}},
	{"what-if", []summaryPart{{"4d", "toggling one server's trust at 10,000 tools"}}},
	{"approvals", []summaryPart{{"3c", "audited approvals, 16 in flight"}}},
	{"against supergateway (audit log on, decisions synced)", []summaryPart{
		{"6a", "go-sdk agent p50"}, {"6b", "p99"}, {"6c", "TypeScript agent p50"}, {"6d", "p99"},
		{"6e", "16 agents' calls/s"}, {"6f", "the older 0.8x p50 goal, go-sdk agent"}, {"6g", "TypeScript agent"}}},
	{"memory of calls waiting for a person", []summaryPart{{"9a", "one session, 80 calls of 3 MB"}, {"9b", "120 sessions, one call of 4 MB each"}}},
	{"soak", []summaryPart{{"8b", "50 agent sessions"}}},
}

// measuredSummary is README's summary of a full run's rows, on commit at date.
func measuredSummary(rows []row, commit, date string) string {
	byID := map[string]row{}
	for _, rw := range rows {
		byID[rw.id] = rw
	}
	var b strings.Builder
	fmt.Fprintf(&b, "From the full `bench/run` on %s, %s (the machine and every row: [BENCHMARKS.md](BENCHMARKS.md)):\n\n", commit, date)
	for _, bl := range summaryBullets {
		var parts []string
		for _, p := range bl.parts {
			rw, ok := byID[p.id]
			switch {
			case !ok:
				parts = append(parts, fmt.Sprintf("%s: not measured (%s)", p.before, p.id))
			case strings.HasPrefix(rw.verdict, "skipped") || strings.HasPrefix(rw.verdict, "FAILED"):
				parts = append(parts, fmt.Sprintf("%s: %s (%s)", p.before, rw.verdict, p.id))
			default:
				fig := rw.brief
				if fig == "" {
					fig = rw.result
				}
				parts = append(parts, fmt.Sprintf("%s %s (%s, goal %s: %s)", p.before, fig, p.id, rw.goal, rw.verdict))
			}
		}
		fmt.Fprintf(&b, "- %s: %s.\n", bl.label, strings.Join(parts, "; "))
	}
	return b.String()
}

// replaceMeasured is readme with the text between its measured markers replaced by
// body.
func replaceMeasured(readme, body string) (string, error) {
	i := strings.Index(readme, measuredBegin)
	j := strings.Index(readme, measuredEnd)
	if i < 0 || j < i {
		return "", errors.New("README.md lacks the measured markers " + measuredBegin + " … " + measuredEnd)
	}
	return readme[:i+len(measuredBegin)] + "\n" + body + readme[j:], nil
}
