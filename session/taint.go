package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

// TaintFile is the name of the taint store in the state dir.
const TaintFile = "taint.json"

// taintStore keeps every context's taint in one JSON file (0600, written atomically),
// so that a taint survives the agent reconnecting and airlock restarting. The file is
// the truth: an engine reloads it whenever it changed on disk (another airlock, or
// `airlock taint clear`), so a taint cleared from the command line is cleared in a
// running session too.
type taintStore struct {
	path string
	last fs.FileInfo // the file as last read or written; nil when absent
}

// same reports whether st is the file as last read or written: every write renames
// a new file into place, so the file's identity changes with each write, whatever
// the clock's granularity.
func (s *taintStore) same(st fs.FileInfo) bool {
	return s.last != nil && os.SameFile(s.last, st) && s.last.ModTime().Equal(st.ModTime()) && s.last.Size() == st.Size()
}

type taintDoc struct {
	Version  int                    `json:"version"`
	Contexts map[string]trust.Taint `json:"contexts"`
}

func openTaintStore(stateDir string) *taintStore {
	if stateDir == "" {
		return nil
	}
	return &taintStore{path: filepath.Join(stateDir, TaintFile)}
}

// load reads the file; changed is false when it is as last read or written.
func (s *taintStore) load(force bool) (map[string]trust.Taint, bool, error) {
	st, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		changed := s.last != nil
		s.last = nil
		return map[string]trust.Taint{}, changed || force, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !force && s.same(st) {
		return nil, false, nil
	}
	b, err := statefile.ReadFile(s.path) // a link or a file others may write is refused, never read
	if err != nil {
		return nil, false, err
	}
	var doc taintDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", s.path, err)
	}
	if doc.Contexts == nil {
		doc.Contexts = map[string]trust.Taint{}
	}
	s.last = st
	return doc.Contexts, true, nil
}

func (s *taintStore) save(taints map[string]trust.Taint) error {
	b, err := json.MarshalIndent(taintDoc{Version: 1, Contexts: taints}, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(s.path, append(b, '\n'), 0o600); err != nil {
		return err
	}
	if st, err := os.Stat(s.path); err == nil {
		s.last = st
	}
	return nil
}

// update changes the file under an exclusive lock on PATH.lock (the lock pins use,
// session/statefile/lock_*.go), so that two airlock processes never lose each other's writes:
// the file is read again under the lock, change is applied to what is there, and the
// result is written when change reports it changed. It returns the taints now in the
// file. Taint never decreases except by a clear, so every change is a merge: the
// contexts this write taints are added (the earliest cause kept) and the contexts it
// clears are removed; nothing else a process remembers is written back, so a clear
// made by another process is never undone by a stale copy.
func (s *taintStore) update(change func(map[string]trust.Taint) bool) (map[string]trust.Taint, error) {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", filepath.Dir(s.path), err)
	}
	lf, err := statefile.OpenLock(s.path + ".lock")
	if err != nil {
		return nil, fmt.Errorf("locking taint: %w", err)
	}
	defer lf.Close()
	if err := statefile.Lock(lf); err != nil {
		return nil, fmt.Errorf("locking taint: %w", err)
	}
	defer statefile.Unlock(lf)
	t, _, err := s.load(true)
	if err != nil {
		return nil, err
	}
	if !change(t) {
		return t, nil
	}
	return t, s.save(t)
}

// mergeTaint adds taint t of context k to m, keeping the earliest cause; it reports
// whether m changed.
func mergeTaint(m map[string]trust.Taint, k string, t trust.Taint) bool {
	if !t.Tainted() {
		return false // names no cause: it never replaces one, nor is it recorded
	}
	if cur, ok := m[k]; ok && cur.Tainted() && !t.At.Before(cur.At) {
		return false
	}
	m[k] = t
	return true
}

// loadTaintsLocked replaces the in-memory taints with the file's when the file
// changed, plus the taints this engine could not write; e.mu is held. A file that
// cannot be read keeps what is in memory (taint never decreases by accident).
func (e *Engine) loadTaintsLocked() {
	if e.store == nil {
		return
	}
	t, changed, err := e.store.load(false)
	if err != nil || !changed {
		return
	}
	for k, u := range e.unsaved {
		mergeTaint(t, k, u)
	}
	e.taints = t
}

// addTaintLocked taints context k: read-merge-write of the file under its lock. A
// taint that cannot be written holds in memory for this run (and is written with
// the next write that succeeds); e.mu is held.
func (e *Engine) addTaintLocked(k string, t trust.Taint) {
	if e.store == nil {
		e.taints[k] = t
		return
	}
	if e.unsaved == nil {
		e.unsaved = map[string]trust.Taint{}
	}
	e.unsaved[k] = t
	merged, err := e.store.update(func(m map[string]trust.Taint) bool {
		dirty := false
		for uk, u := range e.unsaved {
			dirty = mergeTaint(m, uk, u) || dirty
		}
		return dirty
	})
	if err != nil {
		mergeTaint(e.taints, k, t)
		return
	}
	clear(e.unsaved)
	e.taints = merged
}

// Taints returns every tainted context.
func (e *Engine) Taints() map[string]trust.Taint {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.loadTaintsLocked()
	out := make(map[string]trust.Taint, len(e.taints))
	for k, t := range e.taints {
		out[k] = t
	}
	return out
}

// ClearTaint clears a context's taint: only the person does this (the TUI, or
// `airlock taint clear`). It is audited, and fails when the context is not tainted.
func (e *Engine) ClearTaint(ctxName string) error { return e.clearTaint(ctxName, nil) }

// ClearTaintShown clears a context's taint only while it is the taint the person
// was shown (same cause, call and time): a context cleared elsewhere and tainted
// anew since the question was asked keeps its new taint, which nobody has seen.
// It is audited like ClearTaint.
func (e *Engine) ClearTaintShown(ctxName string, shown trust.Taint) error {
	return e.clearTaint(ctxName, &shown)
}

// ErrTaintChanged is ClearTaintShown's error when the taint is no longer the one shown.
var ErrTaintChanged = errors.New("the taint changed since it was shown")

func sameTaint(a, b trust.Taint) bool {
	return a.By == b.By && a.CallID == b.CallID && a.At.Equal(b.At) && a.Channel == b.Channel && a.Subject == b.Subject
}

// clearTaint clears k's taint, under the file's lock when there is a file; with
// want set, only when the taint is want.
func (e *Engine) clearTaint(ctxName string, want *trust.Taint) error {
	k := ctxKey(ctxName)
	e.mu.Lock()
	var t trust.Taint
	var ok bool
	var changed error
	// check decides whether the taint cur may be cleared.
	check := func(cur trust.Taint) bool {
		if want != nil && cur.Tainted() && !sameTaint(cur, *want) {
			changed = fmt.Errorf("context %s: %w: now %s", k, ErrTaintChanged, cur.Reason())
			return false
		}
		return cur.Tainted()
	}
	if e.store == nil {
		if t, ok = e.taints[k]; ok && check(t) {
			delete(e.taints, k)
		}
	} else {
		merged, err := e.store.update(func(m map[string]trust.Taint) bool {
			cur, found := m[k]
			if !found {
				cur, found = e.unsaved[k]
			}
			if !found || !check(cur) {
				return false
			}
			t, ok = cur, true
			delete(e.unsaved, k)
			_, inFile := m[k]
			delete(m, k)
			return inFile
		})
		if err != nil {
			e.mu.Unlock()
			return fmt.Errorf("clearing the taint of %s: %w", k, err)
		}
		for uk, u := range e.unsaved {
			mergeTaint(merged, uk, u)
		}
		e.taints = merged
	}
	e.mu.Unlock()
	if changed != nil {
		return changed
	}
	if !ok {
		return fmt.Errorf("context %s is not tainted", k)
	}
	e.audit(taintClearedRecord(k, t))
	return nil
}

func taintClearedRecord(k string, t trust.Taint) audit.Record {
	return audit.Record{Kind: "taint-cleared", CallID: t.CallID, Context: k, Server: t.By.Server, Tool: t.By.Tool,
		DecidedBy: string(trust.DecidedByPerson), Reason: "the person cleared the taint (" + t.Reason() + ")"}
}

// TaintedContext is one line of `airlock taint list`.
type TaintedContext struct {
	Context string
	Taint   trust.Taint
}

// ListTaints reads the tainted contexts kept in stateDir, by context name.
func ListTaints(stateDir string) ([]TaintedContext, error) {
	s := openTaintStore(stateDir)
	if s == nil {
		return nil, errors.New("no state dir")
	}
	t, _, err := s.load(true)
	if err != nil {
		return nil, err
	}
	out := make([]TaintedContext, 0, len(t))
	for k, v := range t {
		out = append(out, TaintedContext{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Context < out[j].Context })
	return out, nil
}

// ClearTaints clears the taint of one context kept in stateDir, or of every context
// when ctxName is "", writing an audit record for each to log (when not nil). It
// returns the contexts cleared; a running airlock sees the change on its next call.
func ClearTaints(stateDir, ctxName string, log *audit.Log) ([]string, error) {
	s := openTaintStore(stateDir)
	if s == nil {
		return nil, errors.New("no state dir")
	}
	var cleared []string
	var records []audit.Record
	_, err := s.update(func(t map[string]trust.Taint) bool {
		for k := range t {
			if ctxName == "" || k == ctxName {
				cleared = append(cleared, k)
			}
		}
		sort.Strings(cleared)
		for _, k := range cleared {
			records = append(records, taintClearedRecord(k, t[k]))
			delete(t, k)
		}
		return len(cleared) > 0
	})
	if err != nil {
		return nil, err
	}
	if len(cleared) == 0 {
		if ctxName != "" {
			return nil, fmt.Errorf("context %s is not tainted", ctxName)
		}
		return nil, nil
	}
	if log != nil {
		for _, r := range records {
			r.TS = time.Now().UTC()
			if err := log.Append(r); err != nil {
				return cleared, err
			}
		}
	}
	return cleared, nil
}
