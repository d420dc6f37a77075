package audit

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/airlock-mcp/airlock/session/statefile"
)

// The fill. A log opened by Open keeps its file's size ahead of its records: past
// the last record the file holds newlines, written and synced before any record
// goes there, and each commit writes its records over them. A synced append then
// changes nothing of the file but the bytes of its records, so its sync commits
// those and nothing else: no new size, no new blocks, no journal commit of the
// file system (docs/audit-durability.md, "The fill").
//
// The records' end is the file's size less the run of newlines after the last
// record's own: a record never holds a newline, so a blank line can only be fill.
// Every reader stops there (verify, Walk, the tail read by Open). The fill is given
// back when a segment is closed and when the last airlock that has the log open
// closes it; one left by a process that was killed, or in a log moved aside by
// Seal, stays (readers skip it) until an airlock closes that file.
const (
	// fillBytes is how far past its records a log's file is filled: when the
	// delayed sync finds less than fillLow, the file is filled to its records'
	// end plus fillBytes and synced (a step every few thousand records, off the
	// path of a call).
	fillBytes = 1 << 20
	fillLow   = fillBytes / 2
	// endChunk is how much a search for the records' end reads at a time.
	endChunk = 64 << 10
)

// newlines is a chunk of fill, made when first needed (not at the start of every
// airlock command).
var newlines = sync.OnceValue(func() []byte { return bytes.Repeat([]byte{'\n'}, endChunk) })

// recordsEnd is where the records of the file f (size bytes) end: size less the run
// of newlines after the last record's own newline. A file that does not end in a
// newline ends at its size (its last record cut short, which the tail check says).
// It reads the fill, a chunk at a time, back from the end.
func recordsEnd(f *os.File, size int64) (int64, error) {
	buf := make([]byte, endChunk)
	end := size
	for end > 0 {
		n := min(int64(len(buf)), end)
		b := buf[:n]
		if _, err := f.ReadAt(b, end-n); err != nil && err != io.EOF {
			return 0, err
		}
		if bytes.Equal(b, newlines()[:n]) {
			end -= n
			continue
		}
		end -= n - int64(len(bytes.TrimRight(b, "\n")))
		if end < size {
			end++ // the last record's own newline
		}
		return end, nil
	}
	return 0, nil // nothing but fill
}

// recordsEndAfter is recordsEnd for a file whose records were known to end at from
// (from > 0) and to which records were added since: the first blank line at or
// after from, which reads only what was added and the fill's first chunk. A blank
// line before the true end (a damaged file) ends the records early; the check of
// the fill before each write (checkFill) then refuses to write over what follows.
func recordsEndAfter(f *os.File, from, size int64) (int64, error) {
	buf := make([]byte, endChunk+1)
	for off := from - 1; off < size; off += endChunk {
		n := min(int64(len(buf)), size-off)
		b := buf[:n]
		if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.Index(b, []byte("\n\n")); i >= 0 {
			return off + int64(i) + 1, nil
		}
	}
	return size, nil
}

// checkFill makes sure the n bytes past the records' end, those the commit is about
// to write over, are fill (or past the file's end): anything else there was
// written by something other than airlock, and writing over it would destroy it,
// so the log is damaged instead. Called by the committing goroutine under the lock.
func (a *Log) checkFill(n int64) error {
	n = min(n, a.fileSize-a.size)
	if n <= 0 {
		return nil
	}
	if s := a.fillSeen; s.f == a.f && s.at == a.size && n <= s.n {
		return nil // load read them as fill under this hold of the lock
	}
	b := make([]byte, n)
	if _, err := a.f.ReadAt(b, a.size); err != nil && err != io.EOF {
		return fmt.Errorf("reading audit log %s: %w", a.path, err)
	}
	for i, c := range b {
		if c != '\n' {
			a.damage = a.notFill(a.size + int64(i))
			return a.damage
		}
	}
	return nil
}

// fill fills the file to its records' end plus fillBytes when less than fillLow of
// fill is left, and syncs it, so that the next synced appends change nothing of the
// file but their bytes. The delayed sync calls it, never a call's commit: a log
// that lives less than a delayed sync past its first record (a one-shot command)
// writes no fill at all, and a new segment's first records grow it until then. Best effort: where it fails (a disk too full for the whole
// fill) the file is cut back to what it was, and the records go on past its end,
// each growing the file as a log without fill does. Only Open's logs are filled;
// called under the lock, never on a damaged log.
func (a *Log) fill() {
	if !a.shared || a.damage != nil || a.fileSize-a.size >= fillLow {
		return
	}
	to := a.size + fillBytes
	from := max(a.fileSize, a.size)
	for off := from; off < to; {
		n, err := a.f.WriteAt(newlines()[:min(endChunk, to-off)], off)
		off += int64(n)
		if err != nil {
			// A disk too full for the whole fill is left the space it has, as
			// it was (fallocate would not take part of it either).
			_ = a.f.Truncate(from)
			return
		}
	}
	if syncFile(a.f) != nil {
		_ = a.f.Truncate(from)
		return
	}
	a.fileSize = to
}

// release gives the fill back, truncating the file to its records' end, before the
// file is closed as a segment or by the last Close. It cuts only fill: anything
// else past the records (bytes no airlock wrote) makes the log damaged and is left
// in place. Best effort otherwise: fill left behind is skipped by every reader.
// Called under the lock after load, so the records' end is the log's whoever
// wrote it.
func (a *Log) release() {
	if !a.shared || a.damage != nil || a.size < 0 || a.fileSize <= a.size {
		return
	}
	if ok, err := a.onlyFill(a.size); err != nil {
		return
	} else if !ok {
		a.damage = a.notFill(a.size)
		return
	}
	if err := a.f.Truncate(a.size); err == nil {
		a.fileSize = a.size
	}
}

// onlyFill reports whether the file holds nothing but fill from off to its end.
func (a *Log) onlyFill(off int64) (bool, error) {
	buf := make([]byte, endChunk)
	for {
		n, err := a.f.ReadAt(buf, off)
		if !bytes.Equal(buf[:n], newlines()[:n]) {
			return false, nil
		}
		off += int64(n)
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("reading audit log %s: %w", a.path, err)
		}
	}
}

// notFill is the damage of a file that holds, past off (its records' end),
// something other than airlock's fill.
func (a *Log) notFill(off int64) *DamageError {
	return &DamageError{Path: a.path, Problem: fmt.Sprintf("past its last record (byte %d) it holds bytes that are not the newlines airlock fills its file with: something other than airlock wrote there, and airlock neither writes over them nor cuts them", off)}
}

// holdOpen takes a shared lock on the open file for as long as this Log has it
// open (Open's logs only): Close gives the fill back only when no other airlock
// holds one (it is the last to close the log). Best effort: without it the fill
// is given back at every Close, and another airlock writing over it then grows
// the file until its delayed sync fills it again.
func (a *Log) holdOpen() {
	if a.shared {
		_ = statefile.LockShared(a.f)
	}
}

// fillSeen is n bytes of fill that load found at offset at of file f.
type fillSeen struct {
	f  *os.File
	at int64
	n  int64
}
