package session

import (
	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
)

// The session is the RuleWriter of every question (model.Rules): the dialog that
// proposes, edits and checks a remembered rule does not import the session.
func init() { model.UseRuleWriter(ruleWriter{}) }

// ruleWriter is model.RuleWriter over the session's rule functions.
type ruleWriter struct{}

func (ruleWriter) Propose(tool ToolInfo, args []byte) RuleProposal { return ProposeRule(tool, args) }

func (ruleWriter) Check(p RuleProposal, policy trust.Action, tool ToolInfo) error {
	return CheckProposal(p, policy, tool)
}

func (ruleWriter) FormatWhen(w map[string]map[string]any) string { return FormatWhen(w) }

func (ruleWriter) ParseWhen(text string) (map[string]map[string]any, error) { return ParseWhen(text) }
