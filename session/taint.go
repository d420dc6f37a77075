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
	b, err := os.ReadFile(s.path)
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

// loadTaintsLocked replaces the in-memory taints with the file's when the file
// changed; e.mu is held. A file that cannot be read keeps what is in memory (taint
// never decreases by accident).
func (e *Engine) loadTaintsLocked() {
	if e.store == nil {
		return
	}
	t, changed, err := e.store.load(false)
	if err != nil || !changed {
		return
	}
	e.taints = t
}

func (e *Engine) saveTaintsLocked() {
	if e.store == nil {
		return
	}
	_ = e.store.save(e.taints) // in memory it holds for this run either way
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
func (e *Engine) ClearTaint(ctxName string) error {
	k := ctxKey(ctxName)
	e.mu.Lock()
	e.loadTaintsLocked()
	t, ok := e.taints[k]
	if ok {
		delete(e.taints, k)
		e.saveTaintsLocked()
	}
	e.mu.Unlock()
	if !ok {
		return fmt.Errorf("context %s is not tainted", k)
	}
	e.audit(taintClearedRecord(k, t))
	return nil
}

func taintClearedRecord(k string, t trust.Taint) Record {
	return Record{Kind: "taint-cleared", CallID: t.CallID, Context: k, Server: t.By.Server, Tool: t.By.Tool,
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
// when ctxName is "", writing an audit record for each to audit (when not nil). It
// returns the contexts cleared; a running airlock sees the change on its next call.
func ClearTaints(stateDir, ctxName string, audit *Audit) ([]string, error) {
	s := openTaintStore(stateDir)
	if s == nil {
		return nil, errors.New("no state dir")
	}
	t, _, err := s.load(true)
	if err != nil {
		return nil, err
	}
	var cleared []string
	for k := range t {
		if ctxName == "" || k == ctxName {
			cleared = append(cleared, k)
		}
	}
	if len(cleared) == 0 {
		if ctxName != "" {
			return nil, fmt.Errorf("context %s is not tainted", ctxName)
		}
		return nil, nil
	}
	sort.Strings(cleared)
	records := make([]Record, 0, len(cleared))
	for _, k := range cleared {
		records = append(records, taintClearedRecord(k, t[k]))
		delete(t, k)
	}
	if err := s.save(t); err != nil {
		return nil, err
	}
	if audit != nil {
		for _, r := range records {
			r.TS = time.Now().UTC()
			if err := audit.Append(r); err != nil {
				return cleared, err
			}
		}
	}
	return cleared, nil
}
