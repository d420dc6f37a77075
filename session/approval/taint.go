package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"

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
	last statefile.Stamp // the file as last read or written; zero when absent
	held io.Closer       // the file last written here, held open while last names it (statefile.HoldWritten)
	// cache is the file's content as last read or written (while last is): a write
	// under the lock reads the file again only when another process changed it.
	cache *taintDoc
}

// same reports whether st is the file as last read or written. A write renames a
// new file into place, but a later one may be given the inode number the first
// freed, within the same tick of a coarse clock: the stamp compares the change time
// too and vouches only for a file that settled, or that this process wrote and
// holds open (statefile.Stamp, statefile.HoldWritten).
func (s *taintStore) same(st statefile.Stamp) bool { return s.last.Unchanged(st) }

// setLast keeps st (and held, the file it names held open, or nil) as the file's
// stamp and d as its content, letting go of the file held before.
func (s *taintStore) setLast(st statefile.Stamp, held io.Closer, d *taintDoc) {
	if s.held != nil {
		_ = s.held.Close()
	}
	s.last, s.held, s.cache = st, held, d
}

type taintDoc struct {
	Version  int                    `json:"version"`
	Contexts map[string]trust.Taint `json:"contexts"`
	// Seen is when a call of a tainted context was last decided, refreshed at most
	// every tenth of the prune age: a context is idle since the later of its taint's
	// time and this, and pruned only when idle longer than the prune age.
	Seen map[string]time.Time `json:"seen,omitempty"`
}

// clone is a copy of d whose maps may be changed.
func (d *taintDoc) clone() *taintDoc {
	return &taintDoc{Version: d.Version, Contexts: maps.Clone(d.Contexts), Seen: maps.Clone(d.Seen)}
}

func openTaintStore(stateDir string) *taintStore {
	if stateDir == "" {
		return nil
	}
	return &taintStore{path: filepath.Join(stateDir, TaintFile)}
}

// maxTaintFileBytes bounds the taint.json airlock reads (about 150,000 contexts);
// a larger one is unreadable, so every context is treated as tainted.
const maxTaintFileBytes = 64 << 20

// taintReadError is a taint.json that exists but cannot be read (refused, not a
// regular file, not valid JSON): never "nothing is tainted".
type taintReadError struct{ err error }

func (e *taintReadError) Error() string { return e.err.Error() }
func (e *taintReadError) Unwrap() error { return e.err }

// load reads the file; changed is false when it is as last read or written. A file
// there that cannot be read is a *taintReadError. The maps returned are the
// caller's to change.
func (s *taintStore) load(force bool) (map[string]trust.Taint, bool, error) {
	d, changed, err := s.loadDoc(force)
	if d == nil {
		return nil, changed, err
	}
	return d.Contexts, changed, nil
}

func (s *taintStore) loadDoc(force bool) (*taintDoc, bool, error) {
	st, err := statefile.StampPath(s.path) // before the read: a change after it moves the stamp
	if errors.Is(err, fs.ErrNotExist) {
		changed := !s.last.IsZero()
		s.setLast(statefile.Stamp{}, nil, nil)
		return &taintDoc{Version: 1, Contexts: map[string]trust.Taint{}, Seen: map[string]time.Time{}}, changed || force, nil
	}
	if err != nil {
		return nil, false, &taintReadError{err}
	}
	if s.same(st) {
		if !force {
			return nil, false, nil
		}
		if s.cache != nil {
			return s.cache.clone(), true, nil
		}
	}
	if st.Size() > maxTaintFileBytes {
		// Pruning keeps a real one far smaller: this is not a file to read whole.
		return nil, false, &taintReadError{fmt.Errorf("%s is %d bytes, more than the %d airlock reads", s.path, st.Size(), maxTaintFileBytes)}
	}
	b, err := statefile.ReadFile(s.path) // a link, a FIFO or a file others may write is refused, never read
	if err != nil {
		return nil, false, &taintReadError{err}
	}
	var doc taintDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, false, &taintReadError{fmt.Errorf("reading %s: %w", s.path, err)}
	}
	// airlock writes version 1 with its contexts always (an empty object when none
	// is tainted): a file without them (null, {}) or of another version is not one
	// to read as "nothing tainted".
	if doc.Version != 1 {
		return nil, false, &taintReadError{fmt.Errorf("reading %s: version %d, want 1", s.path, doc.Version)}
	}
	if doc.Contexts == nil {
		return nil, false, &taintReadError{fmt.Errorf("reading %s: it holds no contexts", s.path)}
	}
	if doc.Seen == nil {
		doc.Seen = map[string]time.Time{}
	}
	s.setLast(st, nil, doc.clone())
	return &doc, true, nil
}

func (s *taintStore) save(d *taintDoc) error {
	for k := range d.Seen {
		if _, ok := d.Contexts[k]; !ok {
			delete(d.Seen, k) // only a tainted context's activity is kept
		}
	}
	// Compact: the file is rewritten whole at every new taint, and indenting
	// thousands of contexts cost as much as encoding them.
	contexts := d.Contexts
	if contexts == nil {
		contexts = map[string]trust.Taint{} // written as {}: null would read as damage
	}
	b, err := json.Marshal(taintDoc{Version: 1, Contexts: contexts, Seen: d.Seen})
	if err != nil {
		return err
	}
	s.setLast(statefile.Stamp{}, nil, nil)
	if err := statefile.WriteFile(s.path, append(b, '\n')); err != nil {
		return err
	}
	if st, held, err := statefile.HoldWritten(s.path); err == nil { // under the lock, right after the write
		s.setLast(st, held, d.clone())
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
func (s *taintStore) update(change func(d *taintDoc) bool) (map[string]trust.Taint, error) {
	m, _, err := s.updateIf(false, change)
	return m, err
}

// errTaintLockHeld is updateIf's answer when another holds the file's lock.
var errTaintLockHeld = errors.New("taint.json's lock is held")

// updateIf is update, or, with try, update only when the file's lock is free at
// once: held by another (another airlock writing), it changes nothing and says so
// (held true). A caller holding the engine's lock tries, so that it never waits
// for another process with that lock held.
func (s *taintStore) updateIf(try bool, change func(d *taintDoc) bool) (_ map[string]trust.Taint, held bool, _ error) {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return nil, false, fmt.Errorf("creating %s: %w", filepath.Dir(s.path), err)
	}
	lf, err := statefile.OpenLock(s.path + ".lock")
	if err != nil {
		return nil, false, fmt.Errorf("locking taint: %w", err)
	}
	defer lf.Close()
	if try {
		ok, err := statefile.TryLock(lf)
		if err != nil {
			return nil, false, fmt.Errorf("locking taint: %w", err)
		}
		if !ok {
			return nil, true, errTaintLockHeld
		}
	} else if err := statefile.Lock(lf); err != nil {
		return nil, false, fmt.Errorf("locking taint: %w", err)
	}
	defer statefile.Unlock(lf)
	m, err := s.updateHeld(change)
	return m, false, err
}

// waitFree waits until no one holds the file's lock, holding it for no longer
// than it takes to see it free (the caller holds no other lock).
func (s *taintStore) waitFree() {
	lf, err := statefile.OpenLock(s.path + ".lock")
	if err != nil {
		return // updateIf says why
	}
	defer lf.Close()
	if statefile.Lock(lf) == nil {
		statefile.Unlock(lf)
	}
}

// updateHeld is update's read, change and write, the file's lock held.
func (s *taintStore) updateHeld(change func(d *taintDoc) bool) (map[string]trust.Taint, error) {
	d, _, err := s.loadDoc(true)
	if err != nil {
		return nil, err
	}
	if !change(d) {
		return d.Contexts, nil
	}
	return d.Contexts, s.save(d)
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

// unreadableStore is what an engine knows while taint.json cannot be read: why,
// since when (the taint every context is shown carries this time, so a question
// about it stays the same question), and the contexts the person cleared since.
type unreadableStore struct {
	err     error
	since   time.Time
	cleared map[string]bool
}

// taintOf is the taint every context not cleared carries while the store cannot be
// read: it names the file and why, never a server.
func (u *unreadableStore) taintOf() trust.Taint {
	return trust.Taint{By: trust.Ref{Server: "airlock", Tool: TaintFile}, At: u.since, Channel: trust.ChannelUnreadable, Subject: unreadableReason(u.err)}
}

// unreadableReason is why the store cannot be read, as a short clause: a refused
// file's own reason, else the error.
func unreadableReason(err error) string {
	var re *taintReadError
	if errors.As(err, &re) {
		err = re.err
	}
	var se *statefile.Error
	if errors.As(err, &se) {
		return se.Reason()
	}
	return err.Error()
}

// taintLocked is context k's taint as every decision sees it: its own, else, while
// taint.json cannot be read, the store's (unless the person cleared that for k);
// e.mu is held.
func (e *Engine) taintLocked(k string) trust.Taint {
	if t := e.taints[k]; t.Tainted() {
		return t
	}
	if u := e.unreadable; u != nil && !u.cleared[k] {
		return u.taintOf()
	}
	return trust.Taint{}
}

// TaintStoreProblem says why taint.json cannot be read (nil when it can, or there
// is no state dir). While it cannot, every context is treated as tainted.
func (e *Engine) TaintStoreProblem() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.loadTaintsLocked()
	return e.storeProblemLocked()
}

// TaintAndStoreProblem is Taint(ctxName) and TaintStoreProblem from one look at
// taint.json, under one hold of the engine's lock (the TUI asks both at every
// event).
func (e *Engine) TaintAndStoreProblem(ctxName string) (trust.Taint, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.loadTaintsLocked()
	return e.taintLocked(ContextKey(ctxName)), e.storeProblemLocked()
}

// storeProblemLocked is TaintStoreProblem's answer; e.mu is held.
func (e *Engine) storeProblemLocked() error {
	if e.unreadable == nil {
		return nil
	}
	return fmt.Errorf("%s cannot be read, so every context is treated as tainted until it can (or you clear a context's taint): %w", e.store.path, e.unreadable.err)
}

// loadTaintsLocked replaces the in-memory taints with the file's when the file
// changed, plus the taints this engine could not write; e.mu is held. A file that
// cannot be read never reads as "nothing is tainted": what is in memory stays and
// every context is treated as tainted until the file can be read again
// (taintLocked).
func (e *Engine) loadTaintsLocked() {
	if e.store == nil {
		return
	}
	t, changed, err := e.store.load(false)
	if err != nil {
		if u := e.unreadable; u == nil || u.err.Error() != err.Error() {
			// A new problem is a new question: what the person cleared for the
			// last one does not carry over.
			e.unreadable = &unreadableStore{err: err, since: e.now(), cleared: map[string]bool{}}
		}
		return
	}
	e.unreadable = nil
	if !changed {
		return
	}
	for k, u := range e.unsaved {
		mergeTaint(t, k, u)
	}
	e.taints = t
}

// addTaintLocked taints context k: at once in memory, then read-merge-write of the
// file under its lock. A taint that cannot be written holds in memory for this run
// (and is written with the next write that succeeds). e.mu is held, and is let go
// (and taken again) while another process holds the file's lock: the engine's lock
// is never held waiting for another process, for every decision takes it. It
// returns the records of the contexts pruned meanwhile, for the caller to audit once
// it has let go of e.mu (an append can wait for another airlock too).
func (e *Engine) addTaintLocked(k string, t trust.Taint) []audit.Record {
	if e.store == nil {
		e.taints[k] = t
		return nil
	}
	if e.unsaved == nil {
		e.unsaved = map[string]trust.Taint{}
	}
	e.unsaved[k] = t
	mergeTaint(e.taints, k, t) // counts from now, written or not
	for {
		var pruned []audit.Record
		merged, held, err := e.store.updateIf(true, func(d *taintDoc) bool {
			dirty := false
			for uk, u := range e.unsaved {
				dirty = mergeTaint(d.Contexts, uk, u) || dirty
			}
			pruned = e.pruneLocked(d)
			return dirty || len(pruned) > 0
		})
		if held {
			e.mu.Unlock()
			e.store.waitFree()
			e.mu.Lock()
			if len(e.unsaved) == 0 {
				return nil // another write of this process carried it
			}
			continue
		}
		if err != nil {
			return nil
		}
		clear(e.unsaved)
		e.taints = merged
		return pruned
	}
}

// pruneLocked removes from d the taints of contexts idle longer than the prune age
// (limits.taint_prune_after_days) and returns their audit records; e.mu is held.
// A context is idle since the later of its taint's time, the last call decided for
// it that was written to the file (d.Seen) and the last one this process decided; a
// context with a call waiting, a grant or a taint not yet written here is in use,
// and the person's own context is never pruned: only agents' contexts, which come
// and go, fill the file.
func (e *Engine) pruneLocked(d *taintDoc) []audit.Record {
	age := e.limits.TaintPruneAfter
	if age <= 0 {
		return nil
	}
	now := e.now()
	var out []audit.Record
	for _, k := range slices.Sorted(maps.Keys(d.Contexts)) {
		t := d.Contexts[k]
		if _, unsaved := e.unsaved[k]; unsaved || k == model.PersonContext || e.waiting[k] > 0 || len(e.grants[k]) > 0 {
			continue
		}
		last := t.At
		for _, seen := range []time.Time{d.Seen[k], e.seen[k]} {
			if seen.After(last) {
				last = seen
			}
		}
		if now.Sub(last) <= age {
			continue
		}
		delete(d.Contexts, k)
		delete(d.Seen, k)
		out = append(out, audit.Record{Kind: "taint-pruned", CallID: t.CallID, Context: k, Server: t.By.Server, Tool: t.By.Tool,
			DecidedBy: string(trust.DecidedByPolicy),
			Reason: fmt.Sprintf("the taint (%s) was pruned from %s: the context was idle since %s, longer than limits.taint_prune_after_days (%d)",
				t.Reason(), TaintFile, last.UTC().Format(time.RFC3339), int(age/(24*time.Hour)))})
	}
	return out
}

// touchLocked notes that a call of context k is being decided now; e.mu is held.
// For a tainted context it is written to taint.json (d.Seen) when the file's note is
// older than a tenth of the prune age, so that no airlock sharing the state dir
// prunes a context another still uses. A write that fails changes nothing else.
func (e *Engine) touchLocked(k string) {
	age := e.limits.TaintPruneAfter
	t, ok := e.taints[k]
	if e.store == nil || age <= 0 || !ok || !t.Tainted() || e.unreadable != nil {
		return
	}
	now := e.now()
	if e.seen == nil {
		e.seen = map[string]time.Time{}
	}
	e.seen[k] = now
	last := t.At
	if c := e.store.cache; c != nil && c.Seen[k].After(last) {
		last = c.Seen[k]
	}
	if now.Sub(last) <= age/10 {
		return
	}
	// Under the engine's lock, in a decision: tried, never waited for (another
	// airlock writing holds it); the next decision of this context tries again.
	merged, _, err := e.store.updateIf(true, func(d *taintDoc) bool {
		if _, ok := d.Contexts[k]; !ok || !d.Seen[k].Before(now) {
			return false
		}
		d.Seen[k] = now
		return true
	})
	if err != nil {
		return
	}
	for uk, u := range e.unsaved {
		mergeTaint(merged, uk, u)
	}
	e.taints = merged
}

// Taints returns every tainted context. While taint.json cannot be read every
// context is tainted: the person's, and every context this engine knows of (by a
// grant or a client name), each with the store's taint unless it has its own.
func (e *Engine) Taints() map[string]trust.Taint {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.loadTaintsLocked()
	out := make(map[string]trust.Taint, len(e.taints))
	for k, t := range e.taints {
		out[k] = t
	}
	if e.unreadable != nil {
		known := []string{model.PersonContext}
		for k := range e.grants {
			known = append(known, k)
		}
		for k := range e.clients {
			known = append(known, k)
		}
		for _, k := range known {
			if t := e.taintLocked(k); t.Tainted() {
				out[k] = t
			}
		}
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
// want set, only when the taint is want. While another airlock holds the file's
// lock it waits for it with the engine's lock let go, and looks again.
func (e *Engine) clearTaint(ctxName string, want *trust.Taint) error {
	k := ContextKey(ctxName)
	e.mu.Lock()
	var t trust.Taint
	var ok bool
	var changed, failed error
	// check decides whether the taint cur may be cleared.
	check := func(cur trust.Taint) bool {
		if want != nil && cur.Tainted() && !sameTaint(cur, *want) {
			changed = fmt.Errorf("context %s: %w: now %s", k, ErrTaintChanged, cur.Reason())
			return false
		}
		return cur.Tainted()
	}
	memoryOnly := false
retry:
	e.loadTaintsLocked()
	switch {
	case e.store == nil:
		if t, ok = e.taints[k]; ok && check(t) {
			delete(e.taints, k)
		}
	case e.unreadable != nil:
		// taint.json cannot be read, so it cannot be written either: the clear holds
		// in this process, for this problem, and the file's own taints come back
		// once it can be read again.
		if cur := e.taintLocked(k); check(cur) {
			t, ok, memoryOnly = cur, true, true
			delete(e.taints, k)
			delete(e.unsaved, k)
			e.unreadable.cleared[k] = true
			if s, since := e.sinceClear[k]; since {
				e.taints[k], e.unsaved[k] = s, s
			}
		}
	default:
		merged, held, err := e.store.updateIf(true, func(d *taintDoc) bool {
			m := d.Contexts
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
			if s, since := e.sinceClear[k]; since {
				m[k] = s // marked while this clear waited: written with it
				return true
			}
			return inFile
		})
		if held {
			// Another airlock is writing: wait for it without the engine's lock,
			// then look again (the taint may have changed meanwhile). Until the
			// clear is written the taint counts, and a taint marked meanwhile is
			// kept (MarkTainted).
			if e.clearing == nil {
				e.clearing = map[string]int{}
			}
			e.clearing[k]++
			e.mu.Unlock()
			e.store.waitFree()
			e.mu.Lock()
			if e.clearing[k]--; e.clearing[k] == 0 {
				delete(e.clearing, k)
			}
			goto retry
		}
		if err != nil {
			failed = fmt.Errorf("clearing the taint of %s: %w", k, err)
			break
		}
		for uk, u := range e.unsaved {
			mergeTaint(merged, uk, u)
		}
		e.taints = merged
	}
	var pruned []audit.Record
	if s, since := e.sinceClear[k]; since && e.clearing[k] == 0 {
		delete(e.sinceClear, k)
		if !e.taints[k].Tainted() {
			// Not carried by this clear (it failed, could not be written, or
			// another airlock cleared the context meanwhile): marked as if the
			// clear had not waited.
			pruned = e.addTaintLocked(k, s)
		}
	}
	e.mu.Unlock()
	for _, r := range pruned {
		e.audit(r)
	}
	if failed != nil {
		return failed
	}
	if changed != nil {
		return changed
	}
	if !ok {
		return fmt.Errorf("context %s is not tainted", k)
	}
	r := taintClearedRecord(k, t)
	if memoryOnly {
		r.Reason += "; " + TaintFile + " cannot be read, so the clear holds in this process only"
	}
	e.audit(r)
	return nil
}

func taintClearedRecord(k string, t trust.Taint) audit.Record {
	return audit.Record{Kind: "taint-cleared", CallID: t.CallID, Context: k, Server: t.By.Server, Tool: t.By.Tool,
		DecidedBy: string(trust.DecidedByPerson), Reason: "the person cleared the taint (" + t.Reason() + ")"}
}

// MoveTaints moves the taint of every context from matches (other than to) into
// context to, under the file's lock when there is a file: the earliest cause is kept
// in to, and the contexts moved are no longer listed. Nothing is cleared: a context
// named another way that no caller can reach any more (the gateway's agent contexts
// before named tokens) taints the context its agents have now. Each move is
// audited (taint-moved). It returns the contexts moved, sorted; while taint.json
// cannot be read it moves nothing and returns why (every context is tainted then).
// Like clearTaint it never waits for another airlock with the engine's lock held.
func (e *Engine) MoveTaints(to string, from func(ctxName string) bool) ([]string, error) {
	to = ContextKey(to)
	var moved []string
	var taints []trust.Taint
	pick := func(m map[string]trust.Taint) {
		moved, taints = moved[:0], taints[:0]
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if k != to && from(k) && m[k].Tainted() {
				moved, taints = append(moved, k), append(taints, m[k])
			}
		}
	}
	e.mu.Lock()
retry:
	e.loadTaintsLocked()
	switch {
	case e.store == nil:
		pick(e.taints)
		for i, k := range moved {
			mergeTaint(e.taints, to, taints[i])
			delete(e.taints, k)
		}
	case e.unreadable != nil:
		err := e.unreadable.err
		e.mu.Unlock()
		return nil, err
	default:
		merged, held, err := e.store.updateIf(true, func(d *taintDoc) bool {
			pick(d.Contexts)
			for i, k := range moved {
				mergeTaint(d.Contexts, to, taints[i])
				delete(d.Contexts, k)
				if d.Seen[k].After(d.Seen[to]) {
					d.Seen[to] = d.Seen[k]
				}
				delete(d.Seen, k)
			}
			return len(moved) > 0
		})
		if held {
			e.mu.Unlock() // as clearTaint: never wait for another airlock with it held
			e.store.waitFree()
			e.mu.Lock()
			goto retry
		}
		if err != nil {
			e.mu.Unlock()
			return nil, fmt.Errorf("moving taints to %s: %w", to, err)
		}
		for uk, u := range e.unsaved {
			mergeTaint(merged, uk, u)
		}
		e.taints = merged
	}
	e.mu.Unlock()
	for i, k := range moved {
		t := taints[i]
		e.audit(audit.Record{Kind: "taint-moved", CallID: t.CallID, Context: k, Server: t.By.Server, Tool: t.By.Tool,
			DecidedBy: string(trust.DecidedByPolicy), Reason: "the taint (" + t.Reason() + ") now taints context " + to + ", the context of the agents that had " + k})
	}
	return slices.Clone(moved), nil
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
		return nil, unreadableStoreError(s.path, err)
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
	_, err := s.update(func(d *taintDoc) bool {
		t := d.Contexts
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
		return nil, unreadableStoreError(s.path, err)
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

// unreadableStoreError says what a taint.json that cannot be read means for every
// running airlock; another error (the lock) is returned as it is.
func unreadableStoreError(path string, err error) error {
	var re *taintReadError
	if !errors.As(err, &re) {
		return err
	}
	return fmt.Errorf("%s cannot be read (%s): every airlock treats every context as tainted until it can; repair the file, or clear one context in the TUI (w, C), which holds for that process only", path, unreadableReason(err))
}
