package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
)

// command is one line of airlock's help: the one table `airlock help`, `--help`
// and every `airlock CMD --help` print from. Each command's flags come from its
// own flag set (run with --help), so a new flag shows up in help by itself.
type command struct {
	// path is the command and its subcommand as typed: nil for bare airlock.
	path []string
	// args are the positional arguments, as a synopsis.
	args    string
	summary string
	// noFlags says the command takes no flags (its help shows none).
	noFlags bool
}

var commands = []command{
	{path: nil, summary: "open the session on your config: the TUI on a terminal, else the check view"},
	{path: []string{"check"}, summary: "connect (or read a snapshot), classify, print every tool's tier and the toolset's hazards (exit 4 with --fail-on)"},
	{path: []string{"snapshot"}, summary: "record every server's listing to a file, for CI (check --snapshot, --drift)"},
	{path: []string{"demo"}, summary: "the TUI (or check view) on four built-in offline demo servers; --tour walks through them"},
	{path: []string{"demo-server"}, args: "NAME", summary: "serve one demo server over stdio (docs, web, notes, mail)", noFlags: true},
	{path: []string{"call"}, args: "SERVER__TOOL | SERVER TOOL", summary: "one call through the approval engine (SERVER__TOOL may be the name the gateway serves it under); arguments are checked against the tool's input schema first"},
	{path: []string{"read"}, args: "SERVER URI", summary: "read one resource through the approval engine (policy resources = …; an untrusted server's content taints)"},
	{path: []string{"prompt"}, args: "SERVER NAME", summary: "get one prompt with --args through the approval engine (policy prompts = …)"},
	{path: []string{"pins", "list"}, args: "[SERVER]", summary: "list pinned tool definitions and what changed since"},
	{path: []string{"pins", "accept"}, args: "SERVER [TOOL]", summary: "accept a changed definition you reviewed"},
	{path: []string{"gateway", "snippet"}, args: "claude|codex|gemini|cursor|vscode", summary: "the config block that points an agent at the running gateway (found where it runs)"},
	{path: []string{"gateway", "token"}, args: "[add NAME | list | revoke NAME]", summary: "print export AIRLOCK_TOKEN=... for eval in a shell (--export); add, list and revoke named agent tokens, each its agents' own taint and grants"},
	{path: []string{"gateway", "rotate-token"}, summary: "a new gateway token; a running gateway follows it"},
	{path: []string{"bridge"}, summary: "stdio to the running gateway, for agents that only launch stdio servers"},
	{path: []string{"audit", "verify"}, args: "[FILE]", summary: "check the audit log's hash chain, across its segments, and print its head"},
	{path: []string{"audit", "seal"}, args: "--start-new [FILE]", summary: "move a damaged audit log aside, whole, and start a new one whose first record names it"},
	{path: []string{"taint", "list"}, summary: "list the tainted contexts kept in the state dir"},
	{path: []string{"taint", "clear"}, args: "[CONTEXT]", summary: "clear a context's taint (audited)"},
	{path: []string{"rules", "list"}, summary: "list every rule in effect: the config's with their line, the remembered ones (rules.toml), with matches"},
	{path: []string{"rules", "revoke"}, args: "ID", summary: "revoke a remembered decision (audited)"},
	{path: []string{"import"}, args: "[FILE]", summary: "print airlock TOML for another client's servers (Claude, Cursor, VS Code, Codex)"},
	{path: []string{"version"}, summary: "print the version", noFlags: true},
	{path: []string{"help"}, args: "[COMMAND]", summary: "this help (also --help, on any command)", noFlags: true},
}

// exitCodes are every exit code airlock uses.
var exitCodes = [][2]string{
	{"0", "success"},
	{"1", "a config, snapshot or baseline file error, or a command or call that failed (a call that timed out after call_timeout included)"},
	{"2", "usage: an unknown command, flag or argument, or call arguments that do not match the tool's input schema"},
	{"3", "a server failed to connect (check, call)"},
	{"4", "check --fail-on matched a hazard (not in the --baseline), or drift"},
	{"5", "call, read, prompt: denied (by policy, by the person, or nobody answered in time)"},
	{"6", "call: the tool ran and returned an error result (isError), or a result that does not match its output schema"},
	{"7", "audit verify: there is no audit log at that path (point at one with --config, --demo or FILE)"},
}

// wantsHelp reports whether args ask for help (before any "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// name is the command as typed.
func (c command) name() string { return strings.TrimSpace("airlock " + strings.Join(c.path, " ")) }

// flags is the command's flag list, from its own flag set.
func (c command) flags() string {
	if c.noFlags {
		return ""
	}
	var errb bytes.Buffer
	cmd, args := "", []string{"--help"}
	if len(c.path) > 0 {
		cmd, args = c.path[0], append(append([]string{}, c.path[1:]...), "--help")
	}
	dispatch(context.Background(), cmd, args, strings.NewReader(""), io.Discard, &errb)
	var out []string
	for _, l := range strings.Split(errb.String(), "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(l, "Usage of ") || strings.HasPrefix(t, "usage: ") || strings.HasPrefix(t, "airlock ") || t == "" {
			// The flag package's heading and a command's own usage lines:
			// the synopsis above says the same.
			continue
		}
		out = append(out, "    "+l)
	}
	return strings.Join(out, "\n")
}

func (c command) write(w io.Writer, withFlags bool) {
	syn := c.name()
	if c.args != "" {
		syn += " " + c.args
	}
	if c.path == nil || !c.noFlags {
		syn += " [flags]"
	}
	fmt.Fprintf(w, "  %s\n      %s\n", syn, c.summary)
	if withFlags {
		if f := c.flags(); f != "" {
			fmt.Fprintln(w, f)
		}
	}
}

// writeHelp prints help for the command typed (with its subcommand, when given),
// or for every command. It exits 0.
func writeHelp(stdout, stderr io.Writer, cmd string, args []string) int {
	if cmd == "help" && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	if cmd != "" && cmd != "help" {
		var match []command
		for _, c := range commands {
			if len(c.path) > 0 && c.path[0] == cmd && (len(c.path) == 1 || len(args) == 0 || args[0] == c.path[1] || strings.HasPrefix(args[0], "-")) {
				match = append(match, c)
			}
		}
		if len(match) == 0 {
			fmt.Fprintf(stderr, "airlock: unknown command %q (airlock help lists every command)\n", cmd)
			return 2
		}
		for _, c := range match {
			c.write(stdout, true)
		}
		writeExits(stdout)
		return 0
	}
	fmt.Fprintln(stdout, "airlock — a terminal MCP client that asks before risky tool calls")
	fmt.Fprintln(stdout, "\nCommands, each with its flags:")
	for _, c := range commands {
		c.write(stdout, true)
	}
	writeExits(stdout)
	fmt.Fprintln(stdout, "\nThe words airlock uses (tier, trust, leg, guarded, context, TAINTED…) are explained in ? in the TUI and in README.")
	return 0
}

func writeExits(w io.Writer) {
	fmt.Fprintln(w, "\nExit codes:")
	for _, e := range exitCodes {
		fmt.Fprintf(w, "  %s  %s\n", e[0], e[1])
	}
}
