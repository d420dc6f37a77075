package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/airlock-mcp/airlock/session/importer"
)

// AgentLimit is how long one agent CLI lets an MCP tool call take before it gives up
// and reports its own timeout. A call that waits for a person in airlock longer than
// that is answered to nobody: the agent has already told its model the call timed
// out. Figures were read from the pinned CLIs in testdata/agents.
type AgentLimit struct {
	// Agent is the name `airlock gateway snippet` takes; Name the product's.
	Agent, Name string
	// Version is the version the figures were read from ("" for unknown ones).
	Version string
	// Default is the call's wall-clock limit when the agent's config sets none
	// (0: not known). Progress notifications do not extend it.
	Default time.Duration
	// Idle, when not 0, is a further limit on a call that sends nothing; every
	// progress notification starts it anew, and airlock sends one every few seconds
	// while a call waits for a person, so it never ends a call that waits.
	Idle time.Duration
	// Setting is how a person raises the limit for airlock's entry alone; Unit the
	// unit of its number.
	Setting string
	Unit    time.Duration
	// Source says where the figures come from.
	Source string
}

// AgentLimits are the agents whose limits airlock knows, in the order
// `gateway snippet` lists them. docs/agents.md holds the same table.
var AgentLimits = []AgentLimit{
	{
		Agent: "claude", Name: "Claude Code", Version: "2.1.328",
		Default: 100_000_000 * time.Millisecond, Idle: 300 * time.Second,
		Setting: `"timeout"`, Unit: time.Millisecond,
		Source: `per-server "timeout" (ms, at least 1000), else the MCP_TOOL_TIMEOUT environment variable, else 100000000 ms: a hard wall-clock limit that progress does not extend; ` +
			`besides, an idle limit of 300 s over HTTP (1800 s over stdio, CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT) that every progress notification resets (checked every 30 s)`,
	},
	{
		Agent: "codex", Name: "Codex CLI", Version: "0.169.0",
		Default: 300 * time.Second,
		Setting: "tool_timeout_sec", Unit: time.Second,
		Source: "[mcp_servers.NAME] tool_timeout_sec (seconds) in config.toml; unset, a call ends after 300 s whatever progress says (measured once by hand on this version: a call waiting for a person ended after 5m2.5s with \"timed out awaiting tools/call after 300s\"; the native binary prints no default: `codex mcp get NAME --json` shows tool_timeout_sec null)",
	},
	{
		Agent: "gemini", Name: "Gemini CLI", Version: "0.61.0",
		Default: 10 * time.Minute,
		Setting: `"timeout"`, Unit: time.Millisecond,
		Source: "mcpServers.NAME.timeout (ms) in settings.json, else MCP_DEFAULT_TIMEOUT_MSEC = 10 min; passed to the MCP SDK's callTool without resetTimeoutOnProgress, so progress does not extend it",
	},
	{Agent: "cursor", Name: "Cursor", Source: "not documented; not measured"},
	{Agent: "vscode", Name: "VS Code", Source: "not documented; not measured"},
}

// AgentLimitOf returns the limits of agent (a snippet name).
func AgentLimitOf(agent string) (AgentLimit, bool) {
	for _, l := range AgentLimits {
		if l.Agent == agent {
			return l, true
		}
	}
	return AgentLimit{}, false
}

// WriteTimeoutNote writes the `# timeout:` comment line of agent's snippet: how long
// the agent lets a call take, and how to raise it, so that approval_timeout stays
// below it. It writes nothing for an agent airlock does not know. A case of the
// snippet switch calls it as `defer WriteTimeoutNote(w, agent)`, so the line comes
// after the whole snippet.
func WriteTimeoutNote(w io.Writer, agent string) {
	l, ok := AgentLimitOf(agent)
	if !ok {
		return
	}
	if l.Default == 0 {
		fmt.Fprintf(w, "# timeout: %s's limit on a tool call is not known to airlock; if it gives up on a call that waits for your answer, lower approval_timeout in airlock's [policy]\n", l.Name)
		return
	}
	fmt.Fprintf(w, "# timeout: %s gives up on a tool call after %s unless the entry sets %s (%s); keep approval_timeout in airlock's [policy] below it\n",
		l.Name, limitText(l, l.Default), l.Setting, unitName(l.Unit))
}

func unitName(u time.Duration) string {
	if u == time.Second {
		return "seconds"
	}
	return "milliseconds"
}

// limitText is d in the agent's unit, with a readable duration beside it when
// that unit makes a long number.
func limitText(l AgentLimit, d time.Duration) string {
	if l.Unit == time.Second {
		return fmt.Sprintf("%d s", int64(d/time.Second))
	}
	return fmt.Sprintf("%d ms (%s)", int64(d/time.Millisecond), shortDuration(d))
}

// shortDuration writes d as a config duration: 5m, not 5m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// AgentTimeoutWarnings says, for every agent entry that points at airlock, when
// approval_timeout is longer than that agent lets a call take: the agent would
// report its own timeout, not the person's answer. problems (agent configs that
// could not be read) come first, each as a warning of its own.
func AgentTimeoutWarnings(approval time.Duration, entries []importer.AgentEntry, problems []string, home string) []string {
	var out []string
	for _, p := range problems {
		if home != "" {
			p = strings.ReplaceAll(p, home+string(os.PathSeparator), "~"+string(os.PathSeparator))
		}
		out = append(out, "agent config: "+p+": its timeout for airlock's entries is not known")
	}
	for _, e := range entries {
		l, ok := AgentLimitOf(e.Agent)
		if !ok || l.Default == 0 {
			continue
		}
		limit, how := e.Timeout, e.Key+" = "+limitNumber(l, e.Timeout)
		if limit == 0 {
			limit, how = l.Default, e.Key+" unset"
		}
		if approval <= limit {
			continue
		}
		want := approval + time.Minute
		out = append(out, fmt.Sprintf("approval_timeout %s exceeds %s's tool timeout of %s (%s, entry %s: %s): %s reports its own timeout, not your answer; set approval_timeout ≤ %s or %s = %s",
			shortDuration(approval), l.Name, limitText(l, limit), tildePath(e.File, home), e.Name, how, l.Name, shortDuration(limit.Truncate(time.Second)), e.Key, limitNumber(l, want)))
	}
	return out
}

func limitNumber(l AgentLimit, d time.Duration) string {
	return fmt.Sprint(int64(d / l.Unit))
}

// tildePath writes a path under home as ~/…, as the agents' own docs name them.
func tildePath(p, home string) string {
	if home != "" && strings.HasPrefix(p, home+string(os.PathSeparator)) {
		return "~" + p[len(home):]
	}
	return p
}
