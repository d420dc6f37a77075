package model

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
