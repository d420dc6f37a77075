package session

import (
	"github.com/airlock-mcp/airlock/trust"
)

// nameBudget is [gateway] name_budget, or the default.
func (m *Manager) nameBudget() int {
	if g := m.cfg.Gateway; g != nil {
		return trust.ServedNameBudget(g.NameBudget)
	}
	return trust.DefaultNameBudget
}
