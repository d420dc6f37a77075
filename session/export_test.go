package session

import (
	"time"

	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/internal/testhooks"
	"github.com/airlock-mcp/airlock/trust"
)

// TaintEngine is an engine that keeps taint in a state dir and does nothing else,
// with the clock and the audit log a test sets.
type TaintEngine struct {
	*approval.Engine
	now    func() time.Time
	record func(audit.Record) error
}

// NewTaintEngine is an engine that keeps taint in stateDir and does nothing else: the
// multi-process taint tests' children use it.
func NewTaintEngine(stateDir string) *TaintEngine {
	te := &TaintEngine{now: time.Now}
	te.Engine = approval.New(approval.Options{Timeout: time.Minute, StateDir: stateDir,
		Now: func() time.Time { return te.now() },
		Record: func(r audit.Record) error {
			if te.record == nil {
				return nil
			}
			return te.record(r)
		}})
	return te
}

// TaintContext taints a context as a forwarded untrusted text would.
func (e *TaintEngine) TaintContext(ctxName string, t trust.Taint) { e.MarkTainted(ctxName, t) }

// SetAudit makes the engine write its own records (grants, taint cleared) to a.
func (e *TaintEngine) SetAudit(a *audit.Log) { e.record = a.Append }

// SetClock makes the engine read time from now (taint times, pruning).
func (e *TaintEngine) SetClock(now func() time.Time) { e.now = now }

// SetPinsSaveHook makes every pins file write run f first (its error fails the
// write) until the test ends.
func SetPinsSaveHook(t interface{ Cleanup(func()) }, f func() error) {
	testhooks.PinsSave = f
	t.Cleanup(func() { testhooks.PinsSave = nil })
}

// PagesSplitEarly is how many tools/list pages of server's current connection were
// split by its stdout reader (conn.Capture.PagesSplitEarly) rather than after go-sdk read them.
func PagesSplitEarly(m *Manager, server string) int {
	s := m.servers[server]
	s.mu.Lock()
	capt := s.capt
	s.mu.Unlock()
	if capt == nil {
		return 0
	}
	return capt.PagesSplitEarly()
}

// SnapshotBuilds is how many snapshots m has built so far.
func SnapshotBuilds(m *Manager) int64 { return m.builds.Load() }
