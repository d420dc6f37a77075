package ui

import (
	"errors"

	"github.com/airlock-mcp/airlock/session/audit"
)

// auditStatus is the status line's word on the audit log: "" while it is sound, in
// red and naming the problem while it is damaged, cannot be written (a full disk) or
// holds a damaged record. A damaged or unwritable log denies every call, so the
// person sees why before the next "denied" and not only two keys away.
func (m *Model) auditStatus() string {
	if m.sess == nil {
		return ""
	}
	err := m.sess.AuditProblem()
	if err == nil {
		return ""
	}
	text := "✗ audit log: " + inline(m.st, err.Error(), 160)
	var d *audit.DamageError
	if errors.As(err, &d) {
		// The problem first: the log's path and the advice are long, and the
		// advice is the same every time.
		text = "✗ audit log damaged, every call refused: " + inline(m.st, d.Problem, 100) + " (airlock audit verify, then airlock audit seal --start-new)"
	}
	return m.st.ErrorText.Render(text)
}
