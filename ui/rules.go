package ui

// The root's part of the Rules view (ui/screens/rules): it hands the view every
// rule, and carries out what its keys ask. x revokes the selected remembered rule
// through a guarded question (revoking a deny rule makes airlock less careful, so
// it is answered like an allow: no letter revokes; →, enter, then ctrl+y); a config
// rule is the person's own file: the status line says to edit it there. o turns a
// rule off for this session (a what-if change; turning a deny or ask rule off
// takes the same guarded question).

import (
	"strconv"

	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/question"
)

// choiceRevokeRule prefixes the tag of the question that revokes a remembered
// rule; the rule's id follows it.
const choiceRevokeRule = "revoke-rule:"

// choiceRuleOff prefixes the tag of the question that turns a deny or ask rule off
// for this session; the rule's name follows it.
const choiceRuleOff = "rule-off:"

// toggleRuleOff turns the rule named name off for this session, or back on.
func (m *Model) toggleRuleOff(name string, ref trust.Ref) tea.Cmd {
	_, off := m.over.RulesOff[name]
	what := "rule " + common.Inline(m.St, name, 48) + " turned off for this session"
	if off {
		what = "rule " + common.Inline(m.St, name, 48) + " turned back on"
	}
	return whatIfCmd(m.sess, what, func(s *session.Manager) error { return s.SetRuleOff(name, ref, !off) })
}

// applyRuleOff carries out the answer of the question that turns a rule off.
func (m *Model) applyRuleOff(name string, turnOff bool) (*Model, tea.Cmd) {
	if !turnOff {
		m.status = "kept rule " + common.Inline(m.St, name, 48) + " on"
		return m, nil
	}
	if _, off := m.over.RulesOff[name]; off {
		return m, nil // already off
	}
	rules, _ := m.sess.AllRules()
	for _, r := range rules {
		if r.Name == name {
			return m, m.toggleRuleOff(name, trust.Ref{Server: r.Server, Tool: r.Tool})
		}
	}
	m.status = "rule " + common.Inline(m.St, name, 48) + " is gone: nothing was turned off"
	return m, nil
}

// ruleRevokedMsg reports the end of revoking a remembered rule.
type ruleRevokedMsg struct {
	label string
	err   error
}

// openRules shows the Rules view over the current screen; esc returns to it.
func (m *Model) openRules() {
	m.rules.Reset()
	m.refreshRules()
	m.push(screenRules)
}

// refreshRules gives the view every rule as it stands now.
func (m *Model) refreshRules() {
	m.rules.Off = m.over.RulesOff
	m.rules.SetData(m.sess.AllRules())
}

// ruleOff turns rule r off for this session, or back on; turning a deny or ask
// rule off asks first.
func (m *Model) ruleOff(r model.RuleEntry) (*Model, tea.Cmd) {
	if _, off := m.over.RulesOff[r.Name]; !off && r.Policy != trust.Allow {
		// Turning a deny or ask rule off loosens: the calls it stopped may then
		// run unasked (a read the tier allows). Like revoking one, it takes the
		// chord; turning an allow rule off, or any rule back on, does not.
		stops := "It denied"
		if r.Policy == trust.Ask {
			stops = "It asked about"
		}
		lines := []string{
			common.Inline(m.St, trust.Ref{Server: r.Server, Tool: r.Tool}.Qualified(), 60) + " · " + r.Policy.String() + " when " + common.Inline(m.St, trust.DescribeWhen(r.When), 200),
			"",
			stops + " calls to this tool whose arguments match. While it is off, for this session, the tier's policy (or another rule) decides them, and they may run unasked. o turns it back on; U undoes every what-if change.",
		}
		return m, m.q.AskChoice(choiceRuleOff+r.Name, "Turn "+r.Policy.String()+" rule "+common.Inline(m.St, r.Name, 48)+" off?", lines,
			[2]string{"Keep it on", "Turn it off"}, question.GuardedChoiceKeys("keep", "turn the rule off"))
	}
	return m, m.toggleRuleOff(r.Name, trust.Ref{Server: r.Server, Tool: r.Tool})
}

// revokeRule asks to revoke remembered rule r; a config rule is the person's to edit.
func (m *Model) revokeRule(r model.RuleEntry) (*Model, tea.Cmd) {
	if !r.Remembered {
		m.status = "edit " + common.Inline(m.St, r.Source, 40) + " to change this rule: it is in your config, which airlock never writes (" + common.Inline(m.St, r.Name, 48) + ")"
		return m, nil
	}
	what := "It allowed"
	after := "Afterwards these calls ask again."
	switch r.Policy {
	case trust.Deny:
		what, after = "It denied", "Afterwards these calls are no longer denied by it: the tier's policy (or another rule) decides, and they may run."
	case trust.Ask:
		what = "It asked about"
	}
	lines := []string{
		common.Inline(m.St, trust.Ref{Server: r.Server, Tool: r.Tool}.Qualified(), 60) + " · " + r.Policy.String() + " when " + common.Inline(m.St, trust.DescribeWhen(r.When), 200),
		"",
		what + " calls to this tool whose arguments match; it matched " + strconv.Itoa(r.Matched) + " call" + common.Plural(r.Matched) + " this session. " + after +
			" Every running airlock sees the change; the audit log records it.",
	}
	return m, m.q.AskChoice(choiceRevokeRule+r.Name, "Revoke remembered rule "+common.Inline(m.St, r.Name, 24)+"?", lines,
		[2]string{"Keep it", "Revoke"}, question.GuardedChoiceKeys("keep", "revoke the rule"))
}

// revokeRuleCmd revokes a remembered rule off the UI's goroutine: rules.toml is
// written under a lock another airlock process may hold.
func revokeRuleCmd(e *approval.Engine, id string) tea.Cmd {
	return func() tea.Msg {
		return ruleRevokedMsg{label: id, err: e.RevokeRule(id)}
	}
}

// applyRevokeRule carries out the answer of the revoke question.
func (m *Model) applyRevokeRule(id string, revoke bool) (*Model, tea.Cmd) {
	if !revoke {
		m.status = "kept rule " + common.Inline(m.St, id, 24)
		return m, nil
	}
	m.status = "revoking rule " + common.Inline(m.St, id, 24) + "…"
	return m, revokeRuleCmd(m.sess.Engine(), id)
}

// ruleRevoked reports how revoking ended and refreshes the view.
func (m *Model) ruleRevoked(msg ruleRevokedMsg) (*Model, tea.Cmd) {
	name := common.Inline(m.St, msg.label, 24)
	if msg.err != nil {
		m.status = "✗ rule " + name + " was not revoked: " + common.Inline(m.St, msg.err.Error(), 120)
	} else {
		m.status = "✓ revoked rule " + name + " (audited): the calls it decided ask again"
	}
	if m.screen == screenRules {
		m.refreshRules()
	}
	return m, nil
}
