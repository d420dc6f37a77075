// Package audit is airlock's audit log: hash-chained JSON-lines records of every
// decision and call outcome, appended with group commit under a file lock shared by
// every airlock process, kept in segments of bounded size, and verified
// (docs/audit-durability.md). It never appends to a log whose end does not match its
// head file, and it never deletes a record or a segment.
package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

// Record is one line of the audit log: a decision about a call, or a call's outcome.
// Hash is sha256(prev || canonical JSON of the record without hash), so every record
// seals the one before it.
type Record struct {
	Seq     uint64    `json:"seq"`
	TS      time.Time `json:"ts"`
	Prev    string    `json:"prev"`
	Hash    string    `json:"hash,omitempty"`
	Kind    string    `json:"kind"` // decision | outcome | grant | grant-ended | revoke | taint-cleared | rule-saved | rule-revoked | segment | sealed
	CallID  string    `json:"call_id"`
	Context string    `json:"context"`
	Client  string    `json:"client,omitempty"`
	Server  string    `json:"server"`
	Tool    string    `json:"tool"`
	// Served is the name an agent called the tool by when the gateway serves it
	// under a name other than SERVER__TOOL (a long or dotted name, mapped).
	Served    string `json:"served,omitempty"`
	Tier      string `json:"tier"`
	Decision  string `json:"decision,omitempty"`   // allow | deny
	DecidedBy string `json:"decided_by,omitempty"` // a trust.DecidedBy value
	// Reason is the sentence saying why (the verdict's reasons, joined with "; ").
	Reason       string `json:"reason,omitempty"`
	PersonReason string `json:"person_reason,omitempty"` // the person's own reason for a denial
	// Rule names the argument rule that matched the call (a config key path or a
	// remembered rule's id), whether or not it decided; `airlock rules list`
	// counts matches from it.
	Rule       string          `json:"rule,omitempty"`
	ArgsSHA256 string          `json:"args_sha256"`           // of the full, unredacted argument bytes
	Args       json.RawMessage `json:"args"`                  // redacted arguments
	Outcome    string          `json:"outcome,omitempty"`     // ok | tool-error | result-invalid | failed | timeout
	Error      string          `json:"error,omitempty"`       // why a call failed
	DurationMS int64           `json:"duration_ms,omitempty"` // of the forwarded call
	// Previous, in the first record of a segment (kind "segment") or of a log
	// started by Seal (kind "sealed"), names the file before it and that file's head.
	Previous *Link `json:"previous,omitempty"`
}

// Link names another file of the audit log and the newest record it holds: the
// segment before this one, or the log that Seal moved aside.
type Link struct {
	File string `json:"file"` // its base name, in the same folder
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// Log appends hash-chained records to a JSON-lines file. Append returns only once
// the record is synced to disk; concurrent appends share one write and one fsync
// (group commit). AppendUnsynced returns once the record is written (in the
// operating system's cache, so a crash of airlock loses nothing): the next Append's
// fsync carries it, or a sync at most syncDelay later, or Close. The head file is
// written at that delayed sync too, not on every commit (docs/audit-durability.md).
//
// Several airlock processes may append to one log: each commit takes an exclusive
// lock (PATH.lock), reads the chain's tail again when another process wrote since,
// and only then seals its records, so the log stays one chain. A write that fails
// (a full disk) is cut back to the last whole record at once and only the records
// of that commit fail; the next append tries again. A log whose end does not match
// its head file, or whose last records are not a whole chain, is damaged: it is
// never appended to (every Append fails, so calls are denied rather than run
// unaudited) until `airlock audit seal --start-new` moves it aside. A Log is safe
// for concurrent use.
type Log struct {
	path string
	// lockf is PATH.lock (nil for OpenFile, which locks f itself), owned like seq
	// below: lockLog may replace it. shared says it is not nil, for any goroutine.
	lockf  *os.File
	lockID os.FileInfo // lockf's identity, asked once (an open file stays the one it is)
	shared bool
	f      *os.File
	fid    fileStat // f's identity, asked when f is opened; fidOK once asked
	fidOK  bool
	// peek is load's buffer for the bytes past the records, and fillSeen what of
	// them it found to be fill, under the lock held now (checkFill's to trust).
	peek     [4096]byte
	fillSeen fillSeen

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*waiter // records waiting for the next commit
	leading bool      // a goroutine is committing a batch
	closed  bool
	closing bool // Close is committing the last records: no fill to write
	// unsynced is true when records were written since the last fsync, or the head
	// file lags the chain; syncArmed when a delayed sync is scheduled.
	unsynced  bool
	syncArmed bool

	// problem is what is wrong with the log now (nil: nothing), read without mu by
	// Problem; onProblem is told when it changes.
	problem   atomic.Pointer[problem]
	checked   atomic.Pointer[problem] // what CheckAll found
	onProblem atomic.Pointer[func()]

	// decisionsUnsynced: AppendDecision writes without waiting for an fsync
	// ([audit] sync_before_forward = false).
	decisionsUnsynced atomic.Bool
	// segmentBytes: a segment this large is closed and a new one started (0: never).
	segmentBytes atomic.Int64
	// synced is the sequence number of the newest record known on disk; syncs counts
	// fsyncs (for tests).
	synced atomic.Uint64
	syncs  atomic.Int64

	// Owned by the committing goroutine (handed over through mu and leading), or by
	// Open before the Log is shared.
	seq  uint64 // the chain's newest record as last seen
	prev string
	// size is where the records end (the next commit writes there) as this process
	// last saw or wrote them, and fileSize the file's size then: past size, a log
	// opened by Open holds its fill (fill.go).
	size     int64
	fileSize int64
	damage   error // the log may not be appended to (a *DamageError)
	failed   error // the last commit failed to write (a full disk): cleared by the next
	notice   error // damage before the log's end: reported, but the log is appended to
	// headFailed: the last write of the head file failed (a full disk); headSeq is
	// the record the head file names, as this process last wrote it.
	headFailed error
	headSeq    uint64
	start      *Link // the next record written begins a segment after this file
	// rotateAfter: a failed rotation is tried again only after this time.
	rotateAfter time.Time
}

type waiter struct {
	r    Record
	sync bool // the commit must fsync before this waiter returns
	done bool
	err  error
}

type problem struct{ err error }

// MaxArgsBytes is the most (redacted, canonical) argument bytes a record holds
// whole: the ceiling of [limits] max_args_bytes. Longer arguments are replaced in
// the record by a marker saying so (args_sha256 is still of the whole).
const MaxArgsBytes = trust.MaxArgsLimit

// maxFieldBytes bounds each text field of a record (an error, a reason, a name):
// a longer one is cut with a marker. Escaped in JSON a byte takes at most 6, so
// the 19 text fields of a record take at most 19 × 6 × 8 KiB, under fieldsBytes.
const maxFieldBytes = 8 << 10

// fieldsBytes is what a record holds besides its arguments, at most.
const fieldsBytes = 1 << 20

// MaxRecordBytes is the longest line (without its newline) airlock writes into
// an audit log; readers take a longer line for damage, never reading it whole.
const MaxRecordBytes = MaxArgsBytes + fieldsBytes

// maxRecordBytes is MaxRecordBytes, which tests lower.
var maxRecordBytes = MaxRecordBytes

// syncDelay bounds how long a record written by AppendUnsynced, and the head
// file, wait for an fsync when no Append comes to carry them.
const syncDelay = 50 * time.Millisecond

// DefaultSegmentBytes is the size at which a segment is closed and the next begun,
// unless SetSegmentBytes says otherwise ([audit] segment_bytes).
const DefaultSegmentBytes = 64 << 20

// ErrBroken is returned (wrapped) by Append when the record could not be written:
// the disk is full, the log is damaged (a *DamageError is wrapped too), or closed.
var ErrBroken = errors.New("the audit log cannot be written")

// ErrHeadNotWritten is the Problem (wrapped) of a log whose head file could not be
// written (a full disk): the log is still appended to, the head lags, and the next
// synced commit tries again.
var ErrHeadNotWritten = errors.New("its head file could not be written")

// brokenError is a failed append: it is ErrBroken and its cause, and says only the
// cause (which names the audit log already).
type brokenError struct{ err error }

func (e brokenError) Error() string   { return e.err.Error() }
func (e brokenError) Unwrap() []error { return []error{ErrBroken, e.err} }

// DamageError says what is wrong with an audit log airlock will not add to, and
// what to do about it.
type DamageError struct {
	Path    string
	Problem string // what is wrong ("the log ends at record 2 but its head names record 5: …")
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("audit log %s is damaged: %s; airlock adds nothing to it: see what happened with `airlock audit verify`, then move it aside and start a new log with `airlock audit seal --start-new`", e.Path, e.Problem)
}

// Open opens (creating 0600, with its folder 0700) the audit log at path and
// continues its chain from the last record, after checking, under the shared lock,
// that the log's last records are a whole chain that ends where its head file says.
// A log that fails the check is still returned, damaged: its Problem says what is
// wrong and every Append fails. Open fails only when the files cannot be opened (a
// link, a FIFO, another user's file: see session/statefile).
func Open(path string) (*Log, error) {
	lockf, lockID, err := lockLog(path, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("opening audit log: %w", statefile.Advise(err, "or set [audit] path"))
	}
	defer statefile.Unlock(lockf)
	f, err := statefile.OpenWrite(path)
	if err != nil {
		lockf.Close()
		return nil, fmt.Errorf("opening audit log: %w", statefile.Advise(err, "or set [audit] path"))
	}
	a := newLog(path, f, lockf)
	a.lockID = lockID
	a.segmentBytes.Store(DefaultSegmentBytes)
	if err := a.load(); err != nil && a.damage == nil {
		a.f.Close()
		lockf.Close()
		return nil, err
	}
	a.holdOpen()
	a.publish()
	return a, nil
}

// OpenFile continues the chain of the log already open as f, without Open's checks
// that the file is private, and without segments: the caller vouches for f (the
// disk-full test writes to /dev/full, which is no private file), whose own lock
// is taken for each commit.
func OpenFile(f *os.File, path string) (*Log, error) {
	a := newLog(path, f, nil)
	if err := statefile.Lock(f); err != nil {
		return nil, err
	}
	defer statefile.Unlock(f)
	if err := a.load(); err != nil && a.damage == nil {
		f.Close()
		return nil, err
	}
	a.publish()
	return a, nil
}

func newLog(path string, f *os.File, lockf *os.File) *Log {
	a := &Log{path: path, f: f, lockf: lockf, shared: lockf != nil, size: -1, fileSize: -1}
	a.cond = sync.NewCond(&a.mu)
	return a
}

// Path returns the log's file.
func (a *Log) Path() string { return a.path }

// Problem is what is wrong with the log now, or nil: a *DamageError (nothing is
// appended until the log is sealed), the last write's failure (a full disk: the
// next append tries again), a head file that could not be written (ErrHeadNotWritten:
// the log is appended to, the next synced commit tries again), or a damaged record
// before the log's end that CheckAll or Open found (reported; the log is appended to). Safe to call from any goroutine.
func (a *Log) Problem() error {
	if p := a.problem.Load(); p != nil {
		return p.err
	}
	if p := a.checked.Load(); p != nil {
		return p.err
	}
	return nil
}

// CheckAll verifies the whole log, every segment, front to back (VerifyLog), and
// makes a failure its Problem (a notice: the log is still appended to, since
// nothing after a record buries it), telling OnProblem. It reads while other
// records are appended; it takes the lock only to measure the files. It returns
// what VerifyLog found.
func (a *Log) CheckAll() error {
	_, err := VerifyLog(a.path)
	if err != nil {
		a.checked.Store(&problem{fmt.Errorf("audit log %s does not verify: %w (airlock goes on adding to it; `airlock audit verify` says the same)", a.path, err)})
		if f := a.onProblem.Load(); f != nil {
			go (*f)()
		}
	}
	return err
}

// Damaged reports whether the log refuses every append (Problem is a *DamageError).
func (a *Log) Damaged() bool {
	var d *DamageError
	return errors.As(a.Problem(), &d)
}

// OnProblem sets f to be called (from any goroutine, without locks held) each time
// Problem changes.
func (a *Log) OnProblem(f func()) { a.onProblem.Store(&f) }

// publish makes the committing goroutine's view of what is wrong visible to
// Problem, and says so when it changed.
func (a *Log) publish() {
	var err error
	switch {
	case a.damage != nil:
		err = a.damage
	case a.failed != nil:
		err = fmt.Errorf("%w (every call that needs a record is refused; the next record tries again)", a.failed)
	case a.headFailed != nil:
		err = a.headFailed
	case a.notice != nil:
		err = a.notice
	}
	old := a.problem.Load()
	if old == nil && err == nil || old != nil && err != nil && old.err.Error() == err.Error() {
		return
	}
	if err == nil {
		a.problem.Store(nil)
	} else {
		a.problem.Store(&problem{err})
	}
	if f := a.onProblem.Load(); f != nil {
		go (*f)()
	}
}

// Append seals r into the chain, writes it and waits until it is on disk. On error
// nothing may be assumed recorded.
func (a *Log) Append(r Record) error { return a.append(r, true) }

// AppendUnsynced seals r into the chain and writes it, but does not wait for an fsync:
// the next Append carries it to disk, or a sync at most syncDelay later. An
// operating-system crash or power loss within that time can lose it; a crash of
// airlock cannot. For records whose loss is acceptable (a call's outcome: the call
// already ran, and its decision record was synced before it was forwarded).
func (a *Log) AppendUnsynced(r Record) error { return a.append(r, false) }

// SetDecisionsUnsynced sets what AppendDecision waits for: by default (false) the
// record on disk, like Append; with true only written to the file, like
// AppendUnsynced ([audit] sync_before_forward = false, docs/audit-durability.md).
func (a *Log) SetDecisionsUnsynced(unsynced bool) { a.decisionsUnsynced.Store(unsynced) }

// SetSegmentBytes sets the size at which the log's file is closed as a segment
// (renamed PATH.000001, PATH.000002, …, never deleted) and a new one begun; 0 never
// rotates. The default is DefaultSegmentBytes ([audit] segment_bytes).
func (a *Log) SetSegmentBytes(n int64) {
	if a.shared {
		a.segmentBytes.Store(max(n, 0))
	}
}

// SyncedSeq is the sequence number of the newest record this log knows on disk (0:
// none yet); another process's records count once this one synced after them.
func (a *Log) SyncedSeq() uint64 { return a.synced.Load() }

// AppendDecision appends a call's decision record, which the call waits for before it
// is forwarded: synced (Append) unless SetDecisionsUnsynced(true) said written is
// enough (AppendUnsynced).
func (a *Log) AppendDecision(r Record) error {
	return a.append(r, !a.decisionsUnsynced.Load())
}

func (a *Log) append(r Record, sync bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return fmt.Errorf("%w: closed", ErrBroken)
	}
	w := &waiter{r: r, sync: sync}
	a.queue = append(a.queue, w)
	for !w.done {
		if a.leading {
			a.cond.Wait()
			continue
		}
		if a.closed {
			return fmt.Errorf("%w: closed", ErrBroken)
		}
		a.lead(false)
	}
	return w.err
}

// lead commits every record queued so far, called with mu held and no other leader;
// it releases mu while it writes. The batch is synced when one of its records asks
// for it, or when final (the delayed sync, Close) and a record this process wrote is
// not known on disk yet (a synced append since carried it otherwise); every commit
// but a final one schedules the delayed sync, which writes the head file.
func (a *Log) lead(final bool) {
	a.leading = true
	batch := a.queue
	a.queue = nil
	// a.seq is the newest record this process wrote (the leader owns it).
	sync := final && (len(batch) > 0 || a.synced.Load() < a.seq)
	for _, b := range batch {
		sync = sync || b.sync
	}
	a.mu.Unlock()
	err := a.commit(batch, sync, final)
	a.publish()
	a.mu.Lock()
	a.leading = false
	if err != nil {
		err = brokenError{err}
	}
	for _, b := range batch {
		b.done, b.err = true, err
	}
	switch {
	case err != nil:
	case final:
		a.unsynced = false
	case len(batch) > 0:
		// The head file lags until the delayed sync writes it.
		a.unsynced = true
		if !a.syncArmed {
			a.syncArmed = true
			time.AfterFunc(syncDelay, a.delayedSync)
		}
	}
	a.cond.Broadcast()
}

// delayedSync syncs what AppendUnsynced wrote and writes the head file, unless the
// log was closed (Close did it).
func (a *Log) delayedSync() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.syncArmed = false
	for a.leading {
		a.cond.Wait()
	}
	if a.closed || !a.unsynced {
		return
	}
	a.lead(true)
}

func (a *Log) lock() error {
	if a.lockf != nil {
		f, id, err := lockLog(a.path, a.lockf, a.lockID)
		if err != nil {
			return err
		}
		a.lockf, a.lockID = f, id
		return nil
	}
	return statefile.Lock(a.f)
}

// lockLog takes the lock of the log at path: PATH.lock, opened (created when
// missing) unless f is it already open, and locked. A lock is only a lock if every
// process takes it on the same file, so once locked it checks that the file at
// PATH.lock is still the one locked: when it was removed or replaced (another
// process then locks a different file), it opens the one there now and locks that
// instead. It returns the file it holds locked and its identity; f, when
// replaced, is closed. held is f's identity when the caller has it (nil: asked
// here): an open file stays the file it is, so it is asked once per file.
func lockLog(path string, f *os.File, held os.FileInfo) (*os.File, os.FileInfo, error) {
	name := path + ".lock"
	for {
		if f == nil {
			var err error
			if f, err = statefile.OpenLock(name); err != nil {
				return nil, nil, err
			}
			held = nil
		}
		if err := statefile.Lock(f); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("locking %s: %w", name, err)
		}
		if held == nil {
			var err error
			if held, err = f.Stat(); err != nil {
				statefile.Unlock(f)
				f.Close()
				return nil, nil, fmt.Errorf("locking %s: %w", name, err)
			}
		}
		if cur, err := os.Lstat(name); err == nil && os.SameFile(held, cur) {
			return f, held, nil
		}
		statefile.Unlock(f)
		f.Close()
		f, held = nil, nil
	}
}

func (a *Log) unlock() {
	if a.lockf != nil {
		statefile.Unlock(a.lockf)
	} else {
		statefile.Unlock(a.f)
	}
}

// commit writes a batch of records as one write under the file lock: it reads the
// chain's tail again if another process appended (refusing a damaged log), begins a
// new segment when this one is full, seals the records after the tail and writes
// them at the records' end (over the fill: fill.go); with sync it also syncs the
// file, and with head (the delayed sync, Close) replaces the head file and tops up
// the fill. A write or sync that fails is cut back to where the records ended
// before it, so the log always ends in a whole record. Only the leading goroutine
// calls it.
func (a *Log) commit(batch []*waiter, sync, head bool) error {
	if err := a.lock(); err != nil {
		return fmt.Errorf("locking: %w", err)
	}
	defer a.unlock()
	if err := a.load(); err != nil {
		a.failed = err // a file in the way (a link, a FIFO) or unreadable: say so
		return err
	}
	if a.damage != nil {
		return a.damage
	}
	if limit := a.segmentBytes.Load(); limit > 0 && a.size >= limit && len(batch) > 0 && time.Now().After(a.rotateAfter) {
		// A segment that cannot be closed (a system that will not rename an open
		// file) only grows: the records still go in, and a retry waits a while.
		if err := a.rotate(); a.damage != nil {
			return a.damage // bytes past the records that are not fill: nothing renamed
		} else if err != nil {
			a.rotateAfter = time.Now().Add(time.Minute)
			a.notice = fmt.Errorf("audit log %s: could not start a new segment: %w (the records go on in the current file)", a.path, err)
		}
	}
	var buf []byte
	seq, prev := a.seq, a.prev
	var records []Record
	if a.start != nil && len(batch) > 0 {
		records = append(records, Record{Kind: "segment", TS: time.Now().UTC(), Previous: a.start,
			Reason: "the segment before this one, " + a.start.File + ", reached its size limit"})
	}
	for _, w := range batch {
		records = append(records, w.r)
	}
	for _, r := range records {
		seq++
		r.Seq, r.Prev, r.Hash = seq, prev, ""
		line, err := sealRecord(&r)
		if err != nil {
			return fmt.Errorf("auditing: %w", err)
		}
		buf = append(buf, line...)
		prev = r.Hash
	}
	if len(buf) > 0 {
		var err error
		wrote := true
		if a.shared {
			// Over the fill, at the records' end (fill.go). A failed WriteAt
			// says 0 bytes even when part of it was written (it drops a short
			// write's count on the error after it), so it is always cut back.
			if err := a.checkFill(int64(len(buf))); err != nil {
				return err
			}
			_, err = a.f.WriteAt(buf, a.size)
		} else {
			var n int
			n, err = a.f.Write(buf)
			wrote = n > 0
		}
		if err != nil {
			return a.cutBack(fmt.Errorf("writing audit log %s: %w", a.path, err), wrote, int64(len(buf)))
		}
	}
	if sync {
		a.syncs.Add(1)
		if err := syncCommit(a.f); err != nil {
			return a.cutBack(fmt.Errorf("syncing audit log %s: %w", a.path, err), len(buf) > 0, int64(len(buf)))
		}
		// Everything up to seq is on disk, another process's records included.
		a.synced.Store(seq)
	}
	a.size += int64(len(buf))
	a.fileSize = max(a.fileSize, a.size)
	a.seq, a.prev = seq, prev
	if len(buf) > 0 {
		a.start = nil
	}
	a.failed = nil
	if head || sync && a.headFailed != nil {
		// The head names the newest synced record, so that removing whole records
		// from the end, which the chain alone cannot show, is caught. One that
		// failed is tried again at every synced commit, not only the delayed sync.
		a.writeHead(seq, prev)
	}
	if head && !a.closing {
		a.fill() // off the path of a call, at the delayed sync
	}
	return nil
}

// cutBack truncates the file to the records' end before a failed write or sync
// (the fill goes with it), so that the records whose append failed are not in the
// log (a call reported denied has no "allow" on record) and the log ends in a
// whole record: the next append, once there is space again, continues the chain.
// If even that fails, the log's end is torn and the log is damaged.
func (a *Log) cutBack(err error, wrote bool, ours int64) error {
	a.failed = err
	if !wrote {
		return err
	}
	// The fill goes too (the next delayed sync writes it again, space permitting),
	// but only fill: what lies past the commit's own bytes is checked first.
	if a.shared && a.fileSize > a.size+ours {
		if ok, rerr := a.onlyFill(a.size + ours); rerr != nil || !ok {
			if rerr == nil {
				a.damage = a.notFill(a.size + ours)
			} else {
				a.damage = &DamageError{Path: a.path, Problem: fmt.Sprintf("a failed write (%v) could not be cut back: reading past it: %v", err, rerr)}
			}
			// Not cut, so the commit's own bytes are made fill again instead:
			// another airlock must not take its records (a call reported
			// denied has no "allow" on record).
			_, _ = a.f.WriteAt(bytes.Repeat([]byte{'\n'}, int(ours)), a.size)
			_ = syncFile(a.f)
			return a.damage
		}
	}
	a.fileSize = a.size
	if terr := a.f.Truncate(a.size); terr != nil {
		a.damage = &DamageError{Path: a.path, Problem: fmt.Sprintf("a failed write (%v) could not be cut back to the last whole record (%v)", err, terr)}
		return a.damage
	}
	return err
}

// writeHead replaces the head file (best effort: a head that lags only weakens the
// end-of-log check, it never blocks a call). Called under the file lock, so heads of
// several processes are written in chain order.
//
// A head that cannot be written is never silent: it is the log's Problem (a
// notice: the log is still appended to), and every synced commit tries again until
// one succeeds (the delayed sync does too).
func (a *Log) writeHead(seq uint64, hash string) {
	b, _ := json.Marshal(headRecord{Seq: seq, Hash: hash})
	if err := writeHeadFile(a.path+".head", b); err != nil {
		a.headFailed = fmt.Errorf("audit log %s: %w (%w): it names record %d, not %d, so records removed from the end after it would go unseen (airlock goes on adding records; the next one tries again)", a.path, ErrHeadNotWritten, err, a.headSeq, seq)
		return
	}
	a.headSeq, a.headFailed = seq, nil
}

// writeHeadFile writes a head file (a variable so that a test can fail it).
var writeHeadFile = statefile.WriteFileNoSync

// syncCommit is syncFile for a commit's records (a variable so that a test can
// fail it).
var syncCommit = syncFile

// headRecord is the sidecar file PATH.head: the sequence number and hash of the
// newest record known synced.
type headRecord struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// Close closes the log file. Close is idempotent.
func (a *Log) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.leading { // a commit in flight finishes first
		a.cond.Wait()
	}
	if a.closed {
		return nil
	}
	a.closing = true
	if a.unsynced || a.headFailed != nil {
		a.lead(true) // what AppendUnsynced wrote, and the head (again, if it failed)
	}
	if a.shared && a.lock() == nil {
		// The fill given back, at the records' end as the lock shows it now, by
		// the last airlock to close the log: another that has it open goes on
		// writing over it.
		if a.load() == nil && a.fileSize > a.size {
			// Its own shared lock let go first (Windows would refuse the
			// exclusive one over it).
			_ = statefile.Unlock(a.f)
			if last, _ := statefile.TryLock(a.f); last {
				a.release()
			}
		}
		a.unlock()
	}
	a.closed = true
	err := a.f.Close()
	if a.lockf != nil {
		a.lockf.Close()
	}
	return err
}

// load brings the committing goroutine's view of the chain up to date, under the
// lock: when the file at path is no longer the one open (another process began a
// new segment, or sealed the log), it opens the new one; when records were added
// since this process last saw the file (it no longer ends, nor does its fill begin,
// where this process saw the records end), it finds their new end, reads the tail
// again and checks it against the head file. It sets a.damage when the log may not be appended to, and returns an
// error only when the files cannot be read at all.
//
// It asks the file's size and identity without its times (statFile), so that the
// commit after it writes only its records' bytes.
func (a *Log) load() error {
	a.fillSeen = fillSeen{} // seen under an earlier hold of the lock: anything since
	var st fileStat
	var err error
	moved, lerr := false, error(nil) // the path no longer names f; why, when its stat failed
	if a.lockf != nil && a.fidOK {
		// The file at the path is f when its identity is f's, and its size is
		// then f's: one stat, not two.
		cur, perr := statPath(a.path)
		if perr == nil && cur.same(a.fid) {
			st = cur
		} else {
			moved, lerr = true, perr
		}
	} else {
		if st, err = statFile(a.f); err != nil {
			return fmt.Errorf("reading audit log %s: %w", a.path, err)
		}
		if a.lockf != nil {
			cur, perr := statPath(a.path)
			moved, lerr = perr != nil || !st.same(cur), perr
			a.fid, a.fidOK = st, true
		}
	}
	if moved {
		var f *os.File
		f, err = statefile.OpenWrite(a.path)
		if err != nil {
			return fmt.Errorf("reopening audit log: %w", err)
		}
		if lerr != nil {
			syncDir(filepath.Dir(a.path)) // created here: its name durable (see rotate)
		}
		a.f.Close()
		a.f = f
		// A new file: whatever was wrong with the old one is its own.
		a.size, a.fileSize, a.damage, a.notice, a.start = -1, -1, nil, nil, nil
		a.holdOpen()
		if st, err = statFile(f); err != nil {
			a.fidOK = false
			return fmt.Errorf("reading audit log %s: %w", a.path, err)
		}
		a.fid, a.fidOK = st, true
	}
	fileSize := st.size
	// Nothing was added when the file ends at the records' end, or is the size it
	// was and its fill still begins there: every airlock writes its records at
	// that end. A file of another size may hold anything past it (another
	// airlock's fill or records, or bytes no airlock wrote), so its end is found
	// again from the file's end.
	fromEnd := a.size < 0 || fileSize != a.fileSize
	if a.size >= 0 && fileSize == a.size {
		a.fileSize = fileSize
		return nil
	}
	if a.size >= 0 && fileSize == a.fileSize && fileSize > a.size {
		// The fill begins where the records end unless another airlock wrote
		// there. What is read past that first byte is the fill the commit is
		// about to write over (checkFill), read once.
		b := a.peek[:min(fileSize-a.size, int64(len(a.peek)))]
		if _, err := a.f.ReadAt(b, a.size); err != nil {
			return fmt.Errorf("reading audit log %s: %w", a.path, err)
		}
		if b[0] == '\n' {
			n := 0
			for n < len(b) && b[n] == '\n' {
				n++
			}
			a.fillSeen = fillSeen{f: a.f, at: a.size, n: int64(n)}
			return nil
		}
	}
	if a.damage != nil {
		return nil // the same damaged file: still damaged, whatever was added
	}
	if a.size > 0 && fileSize < a.size {
		a.damage = &DamageError{Path: a.path, Problem: fmt.Sprintf("it is %d bytes, shorter than the %d it held when airlock last wrote to it: records were removed", fileSize, a.size)}
		return nil
	}
	head, herr := readHead(a.path)
	if herr == nil {
		a.headSeq = head.Seq
	}
	var size int64
	if fromEnd || a.size == 0 {
		size, err = recordsEnd(a.f, fileSize)
	} else {
		// Another airlock wrote records over the fill, which it checked was fill.
		size, err = recordsEndAfter(a.f, a.size, fileSize)
	}
	if err != nil {
		return fmt.Errorf("reading audit log %s: %w", a.path, err)
	}
	var t tail
	if size > 0 {
		t, err = readTail(a.f, size, head)
		if err != nil {
			return fmt.Errorf("reading audit log %s: %w", a.path, err)
		}
		a.start = nil // another process began the segment
	} else if segs, err := segments(a.path); err != nil {
		return fmt.Errorf("reading audit log %s: %w", a.path, err)
	} else if len(segs) > 0 {
		// The newest segment was closed and no record begun the next (a crash
		// between the two): the chain continues from the segment's end.
		last := segs[len(segs)-1]
		sf, err := statefile.Open(last.path)
		if err != nil {
			a.damage = &DamageError{Path: a.path, Problem: "its newest segment cannot be read: " + err.Error()}
			return nil
		}
		sst, err := sf.Stat()
		var end int64
		if err == nil {
			end, err = recordsEnd(sf, sst.Size())
		}
		if err == nil {
			t, err = readTail(sf, end, head)
		}
		sf.Close()
		if err != nil {
			return fmt.Errorf("reading audit log segment %s: %w", last.path, err)
		}
		if t.problem == "" {
			a.start = &Link{File: filepath.Base(last.path), Seq: t.seq, Hash: t.hash}
		}
	}
	switch {
	case t.problem != "":
		a.damage = &DamageError{Path: a.path, Problem: t.problem}
	case herr != nil && !errors.Is(herr, os.ErrNotExist):
		a.damage = &DamageError{Path: a.path, Problem: herr.Error()}
	case herr != nil && t.seq > 0:
		a.damage = &DamageError{Path: a.path, Problem: fmt.Sprintf("it holds %d records but its head file %s.head is missing, so records removed from its end could not be detected", t.seq, a.path)}
	case herr == nil && head.Seq > t.seq:
		a.damage = &DamageError{Path: a.path, Problem: fmt.Sprintf("the log ends at record %d but its head names record %d: %d records removed from the end", t.seq, head.Seq, head.Seq-t.seq)}
	case herr == nil && t.headChecked && !t.headMatches:
		a.damage = &DamageError{Path: a.path, Problem: fmt.Sprintf("record %d does not match the head: the log was changed", head.Seq)}
	}
	if a.damage != nil {
		return nil
	}
	a.notice = nil
	if t.notice != "" {
		a.notice = fmt.Errorf("audit log %s: %s (airlock goes on adding to it; `airlock audit verify` shows the whole log)", a.path, t.notice)
	}
	if herr != nil && t.seq == 0 && size == 0 && a.start == nil && a.lockf != nil {
		// A new log: its head says so at once, so that another process opening it
		// before the first delayed sync finds a head to check the records against.
		a.writeHead(0, "")
		// The new file's name durable before a decision synced into it counts as
		// on disk (an fsync of a file does not sync its folder).
		syncDir(filepath.Dir(a.path))
	}
	a.seq, a.prev, a.size, a.fileSize = t.seq, t.hash, size, fileSize
	return nil
}

// maxHeadBytes bounds what is read of a head file: a real one is under 100 bytes.
const maxHeadBytes = 4096

// readHead reads PATH.head as airlock opens every private file: an error for a
// link, a FIFO, another user's file or a garbled head; one matching os.ErrNotExist
// when there is none.
func readHead(path string) (headRecord, error) {
	var h headRecord
	f, err := statefile.Open(path + ".head")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return h, err
		}
		return h, fmt.Errorf("its head file cannot be read: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHeadBytes+1))
	if err != nil {
		return h, fmt.Errorf("its head file cannot be read: %w", err)
	}
	if len(b) > maxHeadBytes {
		return h, fmt.Errorf("its head file %s.head is not a head record (over %d bytes)", path, maxHeadBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil || (h.Seq == 0) != (h.Hash == "") {
		return h, fmt.Errorf("its head file %s.head is not a head record", path)
	}
	return h, nil
}

// sealRecord computes r.Hash and returns the record's line: its canonical JSON and a
// newline. The canonical form is what verification compares byte for byte.
//
// Every text field is first cut to maxFieldBytes, and arguments that would make
// the line longer than maxRecordBytes are replaced by a marker object saying so
// (args_sha256 still names the whole): no line airlock writes is longer, so its
// readers can take a longer one for damage without reading it whole.
func sealRecord(r *Record) ([]byte, error) {
	boundFields(r)
	line, err := sealLine(r)
	if err != nil {
		return nil, err
	}
	if len(line)-1 > maxRecordBytes {
		r.Args = json.RawMessage(fmt.Sprintf(`{"(cut by airlock)":"the redacted arguments, %d bytes, make a record longer than the %d bytes airlock writes; args_sha256 is of the whole arguments"}`, len(r.Args), maxRecordBytes))
		if line, err = sealLine(r); err != nil {
			return nil, err
		}
		if len(line)-1 > maxRecordBytes {
			return nil, fmt.Errorf("a record of %d bytes is longer than the %d bytes airlock writes", len(line)-1, maxRecordBytes)
		}
	}
	return line, nil
}

func sealLine(r *Record) ([]byte, error) {
	r.Hash = ""
	body, err := canonicalRecord(r)
	if err != nil {
		return nil, err
	}
	r.Hash = chainHash(r.Prev, body)
	// The canonical record with its hash is the body with the hash member in its
	// sorted place, just before the record's "kind" (no member sorts between
	// them), without marshalling it again. The record's "kind" is the body's last
	// such key: of the members before it only the arguments hold objects, and
	// "previous", after it, holds no "kind"; one inside a string is escaped.
	i := bytes.LastIndex(body, []byte(`,"kind":`))
	if i < 0 {
		return nil, errors.New("a record without its kind")
	}
	line := make([]byte, 0, len(body)+len(r.Hash)+len(`,"hash":""`)+1)
	line = append(line, body[:i]...)
	line = append(line, `,"hash":"`...)
	line = append(line, r.Hash...)
	line = append(line, '"')
	line = append(line, body[i:]...)
	return append(line, '\n'), nil
}

// boundFields cuts every text field of r to maxFieldBytes, with a marker.
func boundFields(r *Record) {
	for _, p := range []*string{&r.Prev, &r.Kind, &r.CallID, &r.Context, &r.Client, &r.Server, &r.Tool, &r.Tier,
		&r.Decision, &r.DecidedBy, &r.Reason, &r.PersonReason, &r.Rule, &r.ArgsSHA256, &r.Outcome, &r.Error} {
		*p = cutField(*p)
	}
	if r.Previous != nil {
		l := *r.Previous
		l.File, l.Hash = cutField(l.File), cutField(l.Hash)
		r.Previous = &l
	}
}

// cutField returns s, or when it is longer than maxFieldBytes its start (cut at a
// character's start) and a marker saying how much was cut.
func cutField(s string) string {
	if len(s) <= maxFieldBytes {
		return s
	}
	keep := maxFieldBytes - 64
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return fmt.Sprintf("%s… [cut by airlock: %d more bytes]", s[:keep], len(s)-keep)
}

func chainHash(prev string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}
