package session

// The names below are those of the approval engine's and the pins' rooms, kept here
// so that cmd/ and ui/ still say session.Pins and the rest meanwhile.

import (
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/pins"
	"github.com/airlock-mcp/airlock/trust"
)

type (
	Engine = approval.Engine
	Grant  = approval.Grant

	Pins      = pins.Store
	PinRecord = pins.Record
)

// RulesFile is [approval.RulesFile].
const RulesFile = approval.RulesFile

// TaintFile is [approval.TaintFile].
const TaintFile = approval.TaintFile

// ErrTaintChanged is [approval.ErrTaintChanged].
var ErrTaintChanged = approval.ErrTaintChanged

// CanonicalArgs is [approval.CanonicalArgs].
func CanonicalArgs(raw []byte) ([]byte, error) { return approval.CanonicalArgs(raw) }

// CheckProposal is [approval.CheckProposal].
func CheckProposal(p RuleProposal, policy trust.Action, tool ToolInfo) error {
	return approval.CheckProposal(p, policy, tool)
}

// ClearTaints is [approval.ClearTaints].
func ClearTaints(stateDir, ctxName string, log *audit.Log) ([]string, error) {
	return approval.ClearTaints(stateDir, ctxName, log)
}

// FormatWhen is [approval.FormatWhen].
func FormatWhen(w map[string]map[string]any) string { return approval.FormatWhen(w) }

// ListRules is [approval.ListRules].
func ListRules(path string) ([]approval.RememberedRule, error) { return approval.ListRules(path) }

// ListTaints is [approval.ListTaints].
func ListTaints(stateDir string) ([]approval.TaintedContext, error) {
	return approval.ListTaints(stateDir)
}

// ParseWhen is [approval.ParseWhen].
func ParseWhen(text string) (map[string]map[string]any, error) { return approval.ParseWhen(text) }

// ProposeRule is [approval.ProposeRule].
func ProposeRule(tool ToolInfo, args []byte) RuleProposal { return approval.ProposeRule(tool, args) }

// RevokeRule is [approval.RevokeRule].
func RevokeRule(path, id string, log *audit.Log) (approval.SavedRule, error) {
	return approval.RevokeRule(path, id, log)
}

// RuleUses is [approval.RuleUses].
func RuleUses(path string) (map[string]approval.RuleUse, error) { return approval.RuleUses(path) }

// RulesPath is [approval.RulesPath].
func RulesPath(cfg *config.Config) (string, error) { return approval.RulesPath(cfg) }

// ToolChanges is [approval.ToolChanges].
func ToolChanges(shown, now ToolInfo) []string { return approval.ToolChanges(shown, now) }

// WhenOf is [approval.WhenOf].
func WhenOf(r trust.Rule) map[string]map[string]any { return approval.WhenOf(r) }

// OpenPins is [pins.Open].
func OpenPins(path string) (*Pins, error) { return pins.Open(path) }

// Identity is [pins.Identity].
func Identity(s config.Server) string { return pins.Identity(s) }
