package model

import (
	"sync/atomic"

	"github.com/airlock-mcp/airlock/trust"
)

// RuleWriter is what a question needs to write a remembered rule with the person:
// the tightest rule that covers a call's arguments, its conditions as the one line
// of TOML the person edits and read back, and the check a rule passes before it is
// saved. The session is the one RuleWriter: proposing resolves the call's paths on
// this machine and checking compiles the rule as the engine does, so that what the
// dialog saves is exactly what the engine will match.
type RuleWriter interface {
	// Propose is the tightest rule that covers args for tool (session.ProposeRule).
	Propose(tool ToolInfo, args []byte) RuleProposal
	// Check refuses a rule that would not compile, could never match tool's schema,
	// or always allows a destructive tool (session.CheckProposal).
	Check(p RuleProposal, policy trust.Action, tool ToolInfo) error
	// FormatWhen is the conditions as one TOML inline table; ParseWhen reads the
	// person's edit of it back, refusing anything else with the reason.
	FormatWhen(when map[string]map[string]any) string
	ParseWhen(text string) (map[string]map[string]any, error)
}

var ruleWriter atomic.Pointer[RuleWriter]

// UseRuleWriter makes w the RuleWriter that Rules returns. The session calls it
// once, when it is linked in (its init), before anything can ask a question.
func UseRuleWriter(w RuleWriter) { ruleWriter.Store(&w) }

// Rules returns the RuleWriter the session set. It panics when none was set: a
// program that asks questions without the session linked in is wrong, and a rule
// written without the engine's checks must never be saved.
func Rules() RuleWriter {
	w := ruleWriter.Load()
	if w == nil {
		panic("model: no RuleWriter: the session package is not linked in")
	}
	return *w
}
