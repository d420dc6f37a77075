package approval

import (
	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
)

// Rules is the rule writer for the questions that make remembered rules
// (the confirmation dialog's RuleWriter): proposing resolves a call's paths on this
// machine and checking compiles the rule as the engine does, so what a dialog
// saves is exactly what the engine will match.
type Rules struct{}

// Propose is the tightest rule that covers args for tool (ProposeRule).
func (Rules) Propose(tool model.ToolInfo, args []byte) model.RuleProposal {
	return ProposeRule(tool, args)
}

// Check is CheckProposal.
func (Rules) Check(p model.RuleProposal, policy trust.Action, tool model.ToolInfo) error {
	return CheckProposal(p, policy, tool)
}

// FormatWhen is the conditions as one TOML inline table.
func (Rules) FormatWhen(w map[string]map[string]any) string { return FormatWhen(w) }

// ParseWhen reads the person's edit of FormatWhen's line back.
func (Rules) ParseWhen(text string) (map[string]map[string]any, error) {
	return ParseWhen(text)
}
