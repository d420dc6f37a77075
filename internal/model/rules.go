package model

import (
	"time"

	"github.com/airlock-mcp/airlock/trust"
)

// RuleProposal is a remembered rule before it is saved: the dialog shows it, the
// person may edit When, then saves it with Response.Remember.
type RuleProposal struct {
	Server, Tool string
	When         map[string]map[string]any
	Reason       string
	// Notes say, one sentence each, where a path argument of a server on this
	// machine opens elsewhere than it reads (through a link), and so which folder
	// the proposal names instead; the dialog shows them before the person saves.
	Notes []string
}

// RuleError is one of the config's rules that can never match a server's listing.
// CI formats place it at the rule's line of the config (Rule), or at the tool's
// table when the whole tool is missing.
type RuleError struct {
	// Tool is the name the rules are written for.
	Tool string
	// Rule is the rule's key path (servers.fs.tools.read_file.rules[0]); "" when
	// the error is about all the rules of a tool the server does not list.
	Rule string
	// Text is the sentence, naming the rule and its line.
	Text string
}

// RuleEntry is one rule as the Rules view lists it: a rule of the config or a
// remembered one (rules.toml), with how often it matched a call in this process.
type RuleEntry struct {
	// Name is the config's key path (servers.web.tools.fetch_url.rules[0]) or the
	// remembered rule's id (r-1f2e3d4c).
	Name string
	// Source is where it was written: the config file and line, or rules.toml.
	Source     string
	Remembered bool
	Server     string
	Tool       string
	// When is the conditions in TOML's shape (field → matcher → operand).
	When   map[string]map[string]any
	Policy trust.Action
	Reason string
	// From says where a remembered rule came from ("the dialog, call c7 in context
	// you"); "" for the config's.
	From    string
	Matched int
	// LastMatch is when it last matched a call in this process (zero: never).
	LastMatch time.Time
	// Problem is set when a remembered rule does not compile, or a rule can never
	// match its tool's listed schema: its tool then asks for every call.
	Problem string
}

// Label is "NAME (SOURCE)", as every sentence names a rule.
func (r RuleEntry) Label() string { return r.Name + " (" + r.Source + ")" }
