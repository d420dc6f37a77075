package session

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
	"strings"
	"sync"
	"time"

	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

// Record is one line of the audit log: a decision about a call, or a call's outcome.
// Hash is sha256(prev || canonical JSON of the record without hash), so every record
// seals the one before it.
type Record struct {
	Seq        uint64          `json:"seq"`
	TS         time.Time       `json:"ts"`
	Prev       string          `json:"prev"`
	Hash       string          `json:"hash,omitempty"`
	Kind       string          `json:"kind"` // "decision" or "outcome"
	CallID     string          `json:"call_id"`
	Context    string          `json:"context"`
	Client     string          `json:"client,omitempty"`
	Server     string          `json:"server"`
	Tool       string          `json:"tool"`
	Tier       string          `json:"tier"`
	Decision   string          `json:"decision,omitempty"`    // allow | deny
	DecidedBy  string          `json:"decided_by,omitempty"`  // policy | user | timeout | taint
	Reason     string          `json:"reason,omitempty"`      // the person's reason for a denial
	ArgsSHA256 string          `json:"args_sha256"`           // of the full, unredacted argument bytes
	Args       json.RawMessage `json:"args"`                  // redacted arguments
	Outcome    string          `json:"outcome,omitempty"`     // ok | tool-error | failed
	Error      string          `json:"error,omitempty"`       // why a call failed
	DurationMS int64           `json:"duration_ms,omitempty"` // of the forwarded call
}

// Audit appends hash-chained records to a JSON-lines file. Append returns only once
// the record is synced to disk; concurrent appends share one fsync (group commit).
// After a failed write the log is closed for good (its chain could be torn) and every
// later Append fails, so calls are denied rather than run unaudited. Audit is safe for
// concurrent use.
type Audit struct {
	path string
	f    *os.File

	mu      sync.Mutex
	cond    *sync.Cond
	seq     uint64
	prev    string
	written uint64 // highest seq written to the file
	synced  uint64 // highest seq known synced
	syncing bool
	broken  error
}

// ErrAuditBroken is returned (wrapped) by Append after the log could not be written.
var ErrAuditBroken = errors.New("the audit log cannot be written")

// OpenAudit opens (creating 0600, with its folder 0700) the audit log at path and
// continues its chain from the last record. A log whose last line is not a whole record
// is refused: run `airlock audit verify` to see what happened to it.
func OpenAudit(path string) (*Audit, error) {
	f, err := statefile.OpenAppend(path)
	if err != nil {
		return nil, fmt.Errorf("opening audit log: %w", statefile.Advise(err, "or set [audit] path"))
	}
	return openAuditFile(f, path)
}

// openAuditFile continues the chain of the log open as f.
func openAuditFile(f *os.File, path string) (*Audit, error) {
	a := &Audit{path: path, f: f}
	a.cond = sync.NewCond(&a.mu)
	last, err := lastLine(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading audit log %s: %w", path, err)
	}
	if len(last) > 0 {
		var r Record
		if err := json.Unmarshal(last, &r); err != nil || r.Hash == "" {
			f.Close()
			return nil, fmt.Errorf("audit log %s ends in a damaged record; check it with `airlock audit verify`", path)
		}
		a.seq, a.prev = r.Seq, r.Hash
		a.written, a.synced = r.Seq, r.Seq
	}
	return a, nil
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
func (a *Audit) Path() string { return a.path }

// Append seals r into the chain, writes it and waits until it is on disk. On error
// nothing may be assumed recorded.
func (a *Audit) Append(r Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.broken != nil {
		return a.broken
	}
	r.Seq, r.Prev, r.Hash = a.seq+1, a.prev, ""
	line, err := sealRecord(&r)
	if err != nil {
		return fmt.Errorf("auditing: %w", err)
	}
	if _, err := a.f.Write(line); err != nil {
		a.broken = fmt.Errorf("%w: %v", ErrAuditBroken, err)
		a.cond.Broadcast()
		return a.broken
	}
	a.seq, a.prev, a.written = r.Seq, r.Hash, r.Seq
	mine := r.Seq
	for a.synced < mine {
		if a.broken != nil {
			return a.broken
		}
		if a.syncing {
			a.cond.Wait()
			continue
		}
		// Lead one fsync for every record written so far.
		a.syncing = true
		target := a.written
		a.mu.Unlock()
		err := a.f.Sync()
		a.mu.Lock()
		a.syncing = false
		if err != nil {
			a.broken = fmt.Errorf("%w: %v", ErrAuditBroken, err)
		} else {
			a.synced = target
			// The head names the newest synced record, so that removing whole records
			// from the end, which the chain alone cannot show, is caught by verify.
			a.writeHead(target, a.prev)
		}
		a.cond.Broadcast()
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
// end-of-log check, it never blocks a call). Called with a.mu held; the hash passed is
// the chain's newest, which equals target's when no write raced in between, so the
// head is written only then.
func (a *Audit) writeHead(seq uint64, hash string) {
	if a.seq != seq {
		return
	}
	b, _ := json.Marshal(headRecord{Seq: seq, Hash: hash})
	_ = statefile.WriteFileNoSync(a.path+".head", b)
}

// Close closes the log file. Close is idempotent.
func (a *Audit) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	if a.broken == nil {
		a.broken = fmt.Errorf("%w: closed", ErrAuditBroken)
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

// VerifyAudit checks a whole audit log: every line is a record in canonical form,
// sequence numbers run 1, 2, 3 … without a gap, each record's prev is the hash of the
// one before, each hash is right, and the file ends with a newline. It returns the
// number of records, or an error naming the first line that fails.
func VerifyAudit(r io.Reader) (int, error) {
	n, _, err := verifyAudit(r)
	return n, err
}

func verifyAudit(r io.Reader) (int, string, error) {
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

// VerifyAuditFile is VerifyAudit on a file, plus the end-of-log check against the
// head file beside it (PATH.head) when there is one: records removed from the end
// leave the head naming a record the file no longer has.
func VerifyAuditFile(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, lastHash, err := verifyAudit(f)
	if err != nil {
		return n, err
	}
	b, err := os.ReadFile(path + ".head")
	if errors.Is(err, os.ErrNotExist) {
		return n, nil
	}
	if err != nil {
		return n, err
	}
	var head headRecord
	if err := json.Unmarshal(b, &head); err != nil {
		return n, fmt.Errorf("%s.head: not a head record: %v", path, err)
	}
	switch {
	case head.Seq > uint64(n):
		return n, fmt.Errorf("the log ends at record %d but record %d was written: %d records removed from the end", n, head.Seq, head.Seq-uint64(n))
	case head.Seq == uint64(n) && head.Hash != lastHash:
		return n, fmt.Errorf("record %d does not match the head: the end of the log was changed", n)
	}
	return n, nil
}

// secretKeys are the argument keys whose values the audit log redacts (matched
// case-insensitively as a substring of the key, so api_key and accessToken count).
var secretKeys = []string{"token", "secret", "password", "passwd", "key", "authorization", "credential", "cookie"}

// Redact returns args with the values of secret-looking keys replaced by
// "[redacted]", at any depth. Invalid JSON is replaced whole: the log never holds
// bytes it could not inspect. The hash of the full arguments is kept elsewhere.
func Redact(args json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return json.RawMessage(`"[unparseable arguments redacted]"`)
	}
	out, err := json.Marshal(redactValue(v))
	if err != nil {
		return json.RawMessage(`"[unparseable arguments redacted]"`)
	}
	return out
}

func redactValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if isSecretKey(k) {
				x[k] = "[redacted]"
			} else {
				x[k] = redactValue(val)
			}
		}
		return x
	case []any:
		for i := range x {
			x[i] = redactValue(x[i])
		}
		return x
	}
	return v
}

func isSecretKey(k string) bool {
	k = strings.ToLower(k)
	for _, s := range secretKeys {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}
