package ui

import (
	"errors"

	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/ui/common"
)

// auditStatus is the status line's word on the audit log: "" while it is sound, in
// red and naming the problem while it is damaged, cannot be written (a full disk),
// its head file cannot be written, or it holds a damaged record. A damaged or unwritable log denies every call, so the
// person sees why before the next "denied" and not only two keys away. It leads the
// status line, and what to run comes before the problem: a cut line keeps both.
func (m *Model) auditStatus() string {
	if m.sess == nil {
		return ""
	}
	err := m.sess.AuditProblem()
	if err == nil {
		return ""
	}
	text := "✗ audit log: " + common.Inline(m.St, err.Error(), 160)
	var d *audit.DamageError
	if errors.As(err, &d) {
		// The path and the full advice are long and the same every time:
		// Activity has them (auditActivity).
		text = "✗ audit log damaged, calls refused (airlock audit verify): " + common.Inline(m.St, d.Problem, 100)
	}
	return m.St.ErrorText.Render(text)
}

// auditActivity is the audit log's problem in full, for Activity, where the status
// line's "(v: all of it)" sends the person: the path, the problem and both commands.
// "" while the log is sound.
func (m *Model) auditActivity() string {
	if m.sess == nil {
		return ""
	}
	err := m.sess.AuditProblem()
	if err == nil {
		return ""
	}
	var d *audit.DamageError
	if errors.As(err, &d) {
		return "✗ audit log " + common.Inline(m.St, d.Path, 200) + " is damaged, so every call is refused: " +
			common.Inline(m.St, d.Problem, 300) + ". See what happened with `airlock audit verify`; to go on, " +
			"`airlock audit seal --start-new` moves the log aside, whole, and starts a new one " +
			"(give each this session's --config, or --demo after airlock demo)"
	}
	return "✗ audit log: " + common.Inline(m.St, err.Error(), 600)
}

// noteAudit adds the audit log's problem to Activity each time it changes.
func (m *Model) noteAudit() {
	a := m.auditActivity()
	if a == m.auditSeen {
		return
	}
	m.auditSeen = a
	if a != "" {
		m.acts.add(activityEntry{at: m.now(), status: a})
	}
}
