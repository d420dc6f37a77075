package session

import (
	"github.com/airlock-mcp/airlock/internal/model"
)

// AuditProblem is what is wrong with the audit log now (audit.Log.Problem), or nil
// when nothing is, or there is no audit log. While it is a damage or a failed write,
// every call that needs a record is denied; a head file that could not be written
// (audit.ErrHeadNotWritten) or a damaged old record is a notice, and calls go on.
func (m *Manager) AuditProblem() error {
	if m.opts.Audit == nil {
		return nil
	}
	return m.opts.Audit.Problem()
}

// watchAudit reports each change of the audit log's problem as an AuditChanged event.
func (m *Manager) watchAudit() {
	m.opts.Audit.OnProblem(func() { m.events.push(model.AuditChanged{}) })
}
