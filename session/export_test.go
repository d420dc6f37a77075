package session

import (
	"time"

	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/trust"
)

// NewTaintEngine is an engine that keeps taint in stateDir and does nothing else: the
// multi-process taint tests' children use it.
func NewTaintEngine(stateDir string) *Engine {
	e := newEngine(nil, nil, time.Minute, time.Now)
	e.store = openTaintStore(stateDir)
	return e
}

// TaintContext taints a context as a forwarded untrusted text would.
func (e *Engine) TaintContext(ctxName string, t trust.Taint) { e.MarkTainted(ctxName, t) }

// SetAudit makes the engine write its own records (grants, taint cleared) to a.
func (e *Engine) SetAudit(a *audit.Log) { e.record = a.Append }

// SetPinsSaveHook makes every pins file write run f first (its error fails the
// write) until the test ends.
func SetPinsSaveHook(t interface{ Cleanup(func()) }, f func() error) {
	pinsSaveHook = f
	t.Cleanup(func() { pinsSaveHook = nil })
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
