// Package audit is airlock's audit log: hash-chained JSON-lines records of every
// decision and call outcome, appended with group commit under a file lock shared by
// every airlock process, and verified (docs/audit-durability.md).
package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

// Record is one line of the audit log: a decision about a call, or a call's outcome.
// Hash is sha256(prev || canonical JSON of the record without hash), so every record
// seals the one before it.
type Record struct {
	Seq       uint64    `json:"seq"`
	TS        time.Time `json:"ts"`
	Prev      string    `json:"prev"`
	Hash      string    `json:"hash,omitempty"`
	Kind      string    `json:"kind"` // decision | outcome | grant | grant-ended | revoke | taint-cleared | rule-saved | rule-revoked
	CallID    string    `json:"call_id"`
	Context   string    `json:"context"`
	Client    string    `json:"client,omitempty"`
	Server    string    `json:"server"`
	Tool      string    `json:"tool"`
	Tier      string    `json:"tier"`
	Decision  string    `json:"decision,omitempty"`   // allow | deny
	DecidedBy string    `json:"decided_by,omitempty"` // a trust.DecidedBy value
	// Reason is the sentence saying why (the verdict's reasons, joined with "; ").
	Reason       string `json:"reason,omitempty"`
	PersonReason string `json:"person_reason,omitempty"` // the person's own reason for a denial
	// Rule names the argument rule that matched the call (a config key path or a
	// remembered rule's id), whether or not it decided; `airlock rules list`
	// counts matches from it.
	Rule       string          `json:"rule,omitempty"`
	ArgsSHA256 string          `json:"args_sha256"`           // of the full, unredacted argument bytes
	Args       json.RawMessage `json:"args"`                  // redacted arguments
	Outcome    string          `json:"outcome,omitempty"`     // ok | tool-error | failed
	Error      string          `json:"error,omitempty"`       // why a call failed
	DurationMS int64           `json:"duration_ms,omitempty"` // of the forwarded call
}

// Log appends hash-chained records to a JSON-lines file. Append returns only once
// the record is synced to disk; concurrent appends share one write and one fsync
// (group commit). AppendUnsynced returns once the record is written (in the
// operating system's cache, so a crash of airlock loses nothing): the next Append's
// fsync carries it, or a sync at most syncDelay later, or Close. The head file is
// written at that delayed sync too, not on every commit (docs/audit-durability.md). Several airlock processes may append to one log: each commit takes
// an exclusive lock on the file, reads the chain's tail again when another process
// wrote since, and only then seals its records, so the log stays one chain. After a
// failed write the log is closed for good (its chain could be torn) and every later
// Append fails, so calls are denied rather than run unaudited. A Log is safe for
// concurrent use.
type Log struct {
	path string
	f    *os.File

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*waiter // records waiting for the next commit
	leading bool      // a goroutine is committing a batch
	broken  error
	// unsynced is true when records were written since the last fsync, or the head
	// file lags the chain; syncArmed when a delayed sync is scheduled.
	unsynced  bool
	syncArmed bool

	// decisionsUnsynced: AppendDecision writes without waiting for an fsync
	// ([audit] sync_before_forward = false).
	decisionsUnsynced atomic.Bool
	// synced is the sequence number of the newest record known on disk; syncs counts
	// fsyncs (for tests).
	synced atomic.Uint64
	syncs  atomic.Int64

	// Owned by the committing goroutine (handed over through mu and leading).
	seq  uint64 // the chain's newest record as last seen
	prev string
	size int64 // the file's size after the last record this process saw or wrote
}

type waiter struct {
	r    Record
	sync bool // the commit must fsync before this waiter returns
	done bool
	err  error
}

// syncDelay bounds how long a record written by AppendUnsynced, and the head
// file, wait for an fsync when no Append comes to carry them.
const syncDelay = 50 * time.Millisecond

// ErrBroken is returned (wrapped) by Append after the log could not be written.
var ErrBroken = errors.New("the audit log cannot be written")

// Open opens (creating 0600, with its folder 0700) the audit log at path and
// continues its chain from the last record. A log whose last line is not a whole record
// is refused: run `airlock audit verify` to see what happened to it.
func Open(path string) (*Log, error) {
	f, err := statefile.OpenAppend(path)
	if err != nil {
		return nil, fmt.Errorf("opening audit log: %w", statefile.Advise(err, "or set [audit] path"))
	}
	return OpenFile(f, path)
}

// OpenFile continues the chain of the log already open as f, without Open's checks
// that the file is private: the caller vouches for f (the disk-full test writes to
// /dev/full, which is no private file).
func OpenFile(f *os.File, path string) (*Log, error) {
	a := &Log{path: path, f: f, size: -1}
	a.cond = sync.NewCond(&a.mu)
	if err := a.readTail(); err != nil {
		f.Close()
		return nil, err
	}
	return a, nil
}

// readTail reads the chain's newest record from the file when the file's size is not
// the one this process last saw (another process appended, or it is the first look).
func (a *Log) readTail() error {
	st, err := a.f.Stat()
	if err != nil {
		return fmt.Errorf("reading audit log %s: %w", a.path, err)
	}
	if st.Size() == a.size {
		return nil
	}
	last, err := lastLine(a.f)
	if err != nil {
		return fmt.Errorf("reading audit log %s: %w", a.path, err)
	}
	a.seq, a.prev = 0, ""
	if len(last) > 0 {
		var r Record
		if err := json.Unmarshal(last, &r); err != nil || r.Hash == "" {
			return fmt.Errorf("audit log %s ends in a damaged record; check it with `airlock audit verify`", a.path)
		}
		a.seq, a.prev = r.Seq, r.Hash
	}
	a.size = st.Size()
	return nil
}

// lastLine returns the last newline-terminated line of f (without the newline), or an
// error when the file does not end with a newline (a torn write).
func lastLine(f *os.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size == 0 {
		return nil, nil
	}
	const chunk = 64 << 10
	var buf []byte
	for off := size; off > 0; {
		n := int64(chunk)
		if off < n {
			n = off
		}
		off -= n
		b := make([]byte, n)
		if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
			return nil, err
		}
		buf = append(b, buf...)
		if len(buf) > 0 && buf[len(buf)-1] != '\n' {
			return nil, errors.New("the last record is cut short (no final newline); check it with `airlock audit verify`")
		}
		if i := bytes.LastIndexByte(buf[:len(buf)-1], '\n'); i >= 0 {
			return buf[i+1 : len(buf)-1], nil
		}
		if off == 0 {
			return buf[:len(buf)-1], nil
		}
	}
	return nil, nil
}

// Path returns the log's file.
func (a *Log) Path() string { return a.path }

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
	if a.broken != nil {
		return a.broken
	}
	w := &waiter{r: r, sync: sync}
	a.queue = append(a.queue, w)
	for !w.done {
		if a.leading {
			a.cond.Wait()
			continue
		}
		if a.broken != nil {
			return a.broken
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
	a.mu.Lock()
	a.leading = false
	if err != nil && a.broken == nil {
		a.broken = fmt.Errorf("%w: %v", ErrBroken, err)
	}
	for _, b := range batch {
		b.done, b.err = true, err
		if err != nil {
			b.err = a.broken
		}
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
// log was closed (Close did it) or broke.
func (a *Log) delayedSync() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.syncArmed = false
	for a.leading {
		a.cond.Wait()
	}
	if a.broken != nil || !a.unsynced {
		return
	}
	a.lead(true)
}

// commit writes a batch of records as one write under the file lock: it reads the
// chain's tail again if another process appended, seals the records after it and
// writes them; with sync it also syncs the file, and with head (the delayed sync,
// Close) replaces the head file. Only the leading goroutine calls it.
func (a *Log) commit(batch []*waiter, sync, head bool) error {
	if err := statefile.Lock(a.f); err != nil {
		return fmt.Errorf("locking: %w", err)
	}
	defer statefile.Unlock(a.f)
	if err := a.readTail(); err != nil {
		return err
	}
	var buf []byte
	seq, prev := a.seq, a.prev
	for _, w := range batch {
		r := w.r
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
		n, err := a.f.Write(buf)
		a.size += int64(n)
		if err != nil {
			return err
		}
	}
	if sync {
		a.syncs.Add(1)
		if err := a.f.Sync(); err != nil {
			return err
		}
		// Everything up to seq is on disk, another process's records included.
		a.synced.Store(seq)
	}
	a.seq, a.prev = seq, prev
	if head {
		// The head names the newest synced record, so that removing whole records
		// from the end, which the chain alone cannot show, is caught by verify.
		a.writeHead(seq, prev)
	}
	return nil
}

// headRecord is the sidecar file PATH.head: the sequence number and hash of the
// newest record known synced.
type headRecord struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// writeHead replaces the head file (best effort: a missing head only weakens the
// end-of-log check, it never blocks a call). Called under the file lock, so heads of
// several processes are written in chain order.
func (a *Log) writeHead(seq uint64, hash string) {
	b, _ := json.Marshal(headRecord{Seq: seq, Hash: hash})
	_ = statefile.WriteFileNoSync(a.path+".head", b)
}

// Close closes the log file. Close is idempotent.
func (a *Log) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.leading { // a commit in flight finishes first
		a.cond.Wait()
	}
	if a.f == nil {
		return nil
	}
	if a.broken == nil && a.unsynced {
		a.lead(true) // what AppendUnsynced wrote, and the head
	}
	err := a.f.Close()
	a.f = nil
	if a.broken == nil {
		a.broken = fmt.Errorf("%w: closed", ErrBroken)
	}
	return err
}

// sealRecord computes r.Hash and returns the record's line: its canonical JSON and a
// newline. The canonical form is what verification compares byte for byte.
func sealRecord(r *Record) ([]byte, error) {
	r.Hash = ""
	body, err := canonicalRecord(r)
	if err != nil {
		return nil, err
	}
	r.Hash = chainHash(r.Prev, body)
	line, err := canonicalRecord(r)
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

func canonicalRecord(r *Record) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return trust.Canonical(b)
}

func chainHash(prev string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Verify checks a whole audit log: every line is a record in canonical form,
// sequence numbers run 1, 2, 3 … without a gap, each record's prev is the hash of the
// one before, each hash is right, and the file ends with a newline. It returns the
// number of records, or an error naming the first line that fails.
func Verify(r io.Reader) (int, error) {
	n, _, err := verify(r)
	return n, err
}

func verify(r io.Reader) (int, string, error) {
	br := bufio.NewReader(r)
	var prev string
	n := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			return n, prev, nil
		}
		if err != nil && err != io.EOF {
			return n, "", err
		}
		lineNo := n + 1
		if line[len(line)-1] != '\n' {
			return n, "", fmt.Errorf("line %d: cut short (no final newline)", lineNo)
		}
		line = line[:len(line)-1]
		var rec Record
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return n, "", fmt.Errorf("line %d: not a record: %v", lineNo, err)
		}
		if rec.Seq != uint64(lineNo) {
			return n, "", fmt.Errorf("line %d: sequence number %d, want %d (a record was removed or moved)", lineNo, rec.Seq, lineNo)
		}
		if rec.Prev != prev {
			return n, "", fmt.Errorf("line %d: prev does not match the hash of line %d", lineNo, lineNo-1)
		}
		want := rec.Hash
		check := rec
		sealed, err := sealRecord(&check)
		if err != nil {
			return n, "", fmt.Errorf("line %d: %v", lineNo, err)
		}
		if check.Hash != want {
			return n, "", fmt.Errorf("line %d: hash mismatch: the record was changed", lineNo)
		}
		if !bytes.Equal(sealed[:len(sealed)-1], line) {
			return n, "", fmt.Errorf("line %d: not in canonical form: the record was changed", lineNo)
		}
		prev = want
		n++
	}
}

// VerifyFile is Verify on a file, plus the end-of-log check against the
// head file beside it (PATH.head) when there is one: records removed from the end
// leave the head naming a record the file no longer has.
func VerifyFile(path string) (int, error) {
	sum, err := VerifyLog(path)
	return sum.Records, err
}

// Summary is what verifying an audit log found: how many records it holds, the
// newest one's hash (the chain's head: written down elsewhere, it anchors the log),
// and whether the head file was there to check the end against.
type Summary struct {
	Records  int
	LastHash string
	// HeadMissing is true when PATH.head does not exist: then records removed from
	// the end of the log cannot be detected.
	HeadMissing bool
}

// VerifyLog is VerifyFile with the whole summary. It proves the file is one
// unbroken chain that ends where its head file says; it cannot prove that nobody who
// could rewrite both rewrote both (see docs/secrets-and-state.md).
func VerifyLog(path string) (Summary, error) {
	var sum Summary
	f, err := os.Open(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	n, lastHash, err := verify(f)
	sum.Records, sum.LastHash = n, lastHash
	if err != nil {
		return sum, err
	}
	b, err := os.ReadFile(path + ".head")
	if errors.Is(err, os.ErrNotExist) {
		sum.HeadMissing = true
		return sum, nil
	}
	if err != nil {
		return sum, err
	}
	var head headRecord
	if err := json.Unmarshal(b, &head); err != nil {
		return sum, fmt.Errorf("%s.head: not a head record: %v", path, err)
	}
	switch {
	case head.Seq > uint64(n):
		return sum, fmt.Errorf("the log ends at record %d but record %d was written: %d records removed from the end", n, head.Seq, head.Seq-uint64(n))
	case head.Seq == uint64(n) && head.Hash != lastHash:
		return sum, fmt.Errorf("record %d does not match the head: the end of the log was changed", n)
	}
	return sum, nil
}
