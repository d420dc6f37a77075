package session

import (
	"os"
	"time"

	"github.com/airlock-mcp/airlock/trust"
)

// OpenAuditFile continues the chain of a log already open as f, without the private
// file checks: the disk-full test writes to /dev/full, which is no private file.
func OpenAuditFile(f *os.File, path string) (*Audit, error) { return openAuditFile(f, path) }

// NewTaintEngine is an engine that keeps taint in stateDir and does nothing else: the
// multi-process taint tests' children use it.
func NewTaintEngine(stateDir string) *Engine {
	e := newEngine(nil, nil, time.Minute, time.Now)
	e.store = openTaintStore(stateDir)
	return e
}

// TaintContext taints a context as a forwarded untrusted text would.
func (e *Engine) TaintContext(ctxName string, t trust.Taint) { e.taint(ctxName, t) }

// SetAudit makes the engine write its own records (grants, taint cleared) to a.
func (e *Engine) SetAudit(a *Audit) { e.record = a.Append }

// SetPinsSaveHook makes every pins file write run f first (its error fails the
// write) until the test ends.
func SetPinsSaveHook(t interface{ Cleanup(func()) }, f func() error) {
	pinsSaveHook = f
	t.Cleanup(func() { pinsSaveHook = nil })
}
