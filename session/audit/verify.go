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
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/airlock-mcp/airlock/session/statefile"
)

// checkLine checks one line (without its newline) as a record on its own: a JSON
// object of the record's fields, as airlock writes it, whose hash is sha256 of its
// prev and of the line without its hash member (which is what the canonical JSON of
// the record without the hash is, for a line airlock wrote: members are sorted, so
// cutting one out leaves the rest canonical). It sets rec's chain fields (Seq, Prev,
// Hash, Kind, Previous) and leaves the others zero.
//
// It reads the line once, member by member, without decoding the values it does
// not need: a log of hundreds of megabytes verifies in seconds. Every byte of the
// line but the hash member is hashed, so any change to one fails the hash. Since
// anyone can recompute a hash, the line must also be spelled as airlock spells it,
// so that one record has one line: UTF-8, members in order and each once, no space
// between tokens, every value JSON, and the numbers airlock writes (seq,
// duration_ms) as Go writes an integer. What it does not check is which of JSON's
// equal spellings a string or a number inside args uses.
func checkLine(line []byte, rec *Record) error {
	*rec = Record{}
	if len(line) < 2 || line[0] != '{' || line[len(line)-1] != '}' {
		return errors.New("not a record: not a JSON object")
	}
	if !utf8.Valid(line) {
		return errors.New("not a record: not UTF-8")
	}
	hashFrom, hashTo := -1, -1
	seen := 0
	var last []byte
	for i := 1; ; {
		if i >= len(line) || line[i] != '"' {
			return fmt.Errorf("not a record: a member's key expected at byte %d", i)
		}
		k := bytes.IndexByte(line[i+1:], '"')
		if k < 0 {
			return errors.New("not a record: a key is not closed")
		}
		key := line[i+1 : i+1+k]
		if bytes.IndexByte(key, '\\') >= 0 {
			return errors.New("not a record: an escaped key")
		}
		if last != nil && bytes.Compare(last, key) >= 0 {
			return fmt.Errorf("not a record: member %s out of order or repeated", quoted(key))
		}
		last = key
		v := i + 1 + k + 1
		if v >= len(line) || line[v] != ':' {
			return fmt.Errorf("not a record: ':' expected at byte %d", v)
		}
		v++
		e, err := scanValue(line, v, 0)
		if err != nil {
			return fmt.Errorf("not a record: %s: %v", quoted(key), err)
		}
		val := line[v:e]
		switch string(key) {
		case "seq":
			n, err := strconv.ParseUint(string(val), 10, 64)
			if err != nil || strconv.FormatUint(n, 10) != string(val) {
				return fmt.Errorf("not a record: seq %s", quoted(val))
			}
			rec.Seq = n
			seen |= 1
		case "duration_ms":
			if n, err := strconv.ParseInt(string(val), 10, 64); err != nil || strconv.FormatInt(n, 10) != string(val) {
				return fmt.Errorf("not a record: duration_ms %s", quoted(val))
			}
		case "prev", "hash", "kind":
			str, ok := plainString(val)
			if !ok {
				return fmt.Errorf("not a record: %s is not a plain string", key)
			}
			switch key[0] {
			case 'p':
				rec.Prev = str
				seen |= 2
			case 'h':
				rec.Hash = str
				hashFrom, hashTo = i, e
				seen |= 4
			default:
				rec.Kind = str
				seen |= 8
			}
		case "previous":
			var l Link
			if err := json.Unmarshal(val, &l); err != nil {
				return fmt.Errorf("not a record: previous: %v", err)
			}
			rec.Previous = &l
		default:
			if !recordFields[string(key)] {
				return fmt.Errorf("not a record: unknown field %s", quoted(key))
			}
		}
		if e == len(line)-1 {
			break
		}
		if e >= len(line) || line[e] != ',' {
			return fmt.Errorf("not a record: ',' expected at byte %d", e)
		}
		i = e + 1
	}
	if seen != 15 {
		return errors.New("not a record: seq, prev, hash or kind missing")
	}
	if len(rec.Hash) != sha256.Size*2 || hashTo >= len(line)-1 {
		return errors.New("hash mismatch: the record was changed")
	}
	h := sha256.New()
	h.Write([]byte(rec.Prev))
	h.Write(line[:hashFrom])
	h.Write(line[hashTo+1:]) // and its comma
	var sum [sha256.Size * 2]byte
	hex.Encode(sum[:], h.Sum(nil))
	if string(sum[:]) != rec.Hash {
		return errors.New("hash mismatch: the record was changed")
	}
	return nil
}

// quoted quotes b for an error message, cut to a length a person reads: a hostile
// line may hold a key or a value of any size.
func quoted(b []byte) string {
	const most = 64
	if len(b) > most {
		return strconv.Quote(string(b[:most])) + "…"
	}
	return strconv.Quote(string(b))
}

// recordFields are the JSON names of Record's fields.
var recordFields = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeFor[Record]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[name] = true
	}
	return m
}()

// plainString returns a JSON string value without escapes (hashes, kinds).
func plainString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' || bytes.IndexByte(val, '\\') >= 0 {
		return "", false
	}
	return string(val[1 : len(val)-1]), true
}

// maxValueDepth bounds how deep scanValue follows nested objects and arrays: far
// deeper than any arguments airlock accepts, and a bound on its stack.
const maxValueDepth = 10000

// scanValue returns where the JSON value starting at b[i] ends (one past it),
// checking that it is JSON written without space between its tokens.
func scanValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, errors.New("a value expected")
	}
	switch c := b[i]; c {
	case '"':
		return scanString(b, i)
	case '{', '[':
		if depth >= maxValueDepth {
			return 0, errors.New("nested too deep")
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		i++
		if i < len(b) && b[i] == end {
			return i + 1, nil
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return 0, fmt.Errorf("a key expected at byte %d", i)
				}
				e, err := scanString(b, i)
				if err != nil {
					return 0, err
				}
				if e >= len(b) || b[e] != ':' {
					return 0, fmt.Errorf("':' expected at byte %d", e)
				}
				i = e + 1
			}
			e, err := scanValue(b, i, depth+1)
			if err != nil {
				return 0, err
			}
			switch {
			case e < len(b) && b[e] == ',':
				i = e + 1
			case e < len(b) && b[e] == end:
				return e + 1, nil
			default:
				return 0, fmt.Errorf("',' or '%c' expected at byte %d", end, e)
			}
		}
	case 't', 'f', 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(b[i:], []byte(lit)) {
				return i + len(lit), nil
			}
		}
		return 0, fmt.Errorf("a value expected at byte %d", i)
	}
	return scanNumber(b, i)
}

// scanNumber returns where the JSON number starting at b[i] ends.
func scanNumber(b []byte, i int) (int, error) {
	start := i
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return 0, fmt.Errorf("a value expected at byte %d", start)
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return 0, fmt.Errorf("a number's fraction expected at byte %d", i)
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return 0, fmt.Errorf("a number's exponent expected at byte %d", i)
		}
	}
	return i, nil
}

// scanString returns where the JSON string starting at b[i] (a quote) ends,
// checking its escapes and that it holds no control character.
func scanString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, nil
		case c == '\\':
			j++
			if j >= len(b) {
				break
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) {
					return 0, errors.New("a string is not closed")
				}
				for _, h := range b[j+1 : j+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return 0, fmt.Errorf("a bad escape at byte %d", j)
					}
				}
				j += 4
			default:
				return 0, fmt.Errorf("a bad escape at byte %d", j)
			}
		case c < 0x20:
			return 0, fmt.Errorf("a control character in a string at byte %d", j)
		}
	}
	return 0, errors.New("a string is not closed")
}

// chain checks records one line at a time, carrying the chain across the files of
// a log: sequence numbers run on without a gap, each record's prev is the hash of the
// one before, and each record is whole (checkLine).
type chain struct {
	n    int // records checked
	seq  uint64
	prev string
	// head, when set, is checked as its record goes by.
	head        *headRecord
	headMatched bool
	// visit, when set, is handed each record's kind and line (without its newline)
	// once the record is checked; an error it returns ends the walk.
	visit func(kind string, line []byte) error
}

// file checks the records of one file of the log, read from r; name is what errors
// call it, and prevFile the file before it that held records ("" for the first).
// The log's first record is record 1; every later file begins with a segment record
// naming the one before.
func (c *chain) file(r io.Reader, name string, prevFile string) error {
	br := bufio.NewReaderSize(r, 256<<10)
	lineNo := 0
	var off int64 // where the line begins in the file
	var rec Record
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A record longer than the buffer: gathered whole, up to the longest
			// airlock writes; a longer line is damage, and is not read further.
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				if len(long) > maxRecordBytes+1 {
					return fmt.Errorf("%s line %d (byte %d): a line longer than airlock writes (over %d bytes)", name, lineNo+1, off, maxRecordBytes)
				}
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) == 0 && err == io.EOF {
			return nil
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: reading: %w", name, err)
		}
		lineNo++
		if len(line) > maxRecordBytes+1 || len(line) > maxRecordBytes && line[len(line)-1] != '\n' {
			return fmt.Errorf("%s line %d (byte %d): a line longer than airlock writes (over %d bytes)", name, lineNo, off, maxRecordBytes)
		}
		off += int64(len(line))
		if line[len(line)-1] != '\n' {
			return fmt.Errorf("%s line %d: cut short (no final newline)", name, lineNo)
		}
		if err := checkLine(line[:len(line)-1], &rec); err != nil {
			return fmt.Errorf("%s line %d: %v", name, lineNo, err)
		}
		switch {
		case c.n == 0 && lineNo == 1 && rec.Seq != 1:
			return fmt.Errorf("%s line 1: the chain starts at record %d: the segments before it are missing", name, rec.Seq)
		case rec.Seq != c.seq+1:
			return fmt.Errorf("%s line %d: sequence number %d, want %d (a record was removed or moved)", name, lineNo, rec.Seq, c.seq+1)
		case rec.Prev != c.prev:
			if lineNo == 1 && c.n > 0 {
				return fmt.Errorf("%s line 1: prev does not match the hash of the last record of %s: the segments do not join", name, prevFile)
			}
			return fmt.Errorf("%s line %d: prev does not match the hash of line %d", name, lineNo, lineNo-1)
		}
		if lineNo == 1 && c.n > 0 {
			// A segment's first record names the one before it.
			// By its number: a sealed log's segments keep theirs under a new name.
			if rec.Kind != "segment" || rec.Previous == nil || filepath.Ext(rec.Previous.File) != filepath.Ext(prevFile) || rec.Previous.Seq != c.seq || rec.Previous.Hash != c.prev {
				return fmt.Errorf("%s line 1: not the start of a segment after %s", name, prevFile)
			}
		}
		if c.head != nil && rec.Seq == c.head.Seq {
			if rec.Hash != c.head.Hash {
				return fmt.Errorf("%s line %d: record %d does not match the head: the log was changed", name, lineNo, rec.Seq)
			}
			c.headMatched = true
		}
		c.seq, c.prev = rec.Seq, rec.Hash
		c.n++
		if c.visit != nil {
			if err := c.visit(rec.Kind, line[:len(line)-1]); err != nil {
				return err
			}
		}
	}
}

// Verify checks a whole audit log file read from r: every line is a record spelled
// as airlock writes it (checkLine), sequence numbers run 1, 2, 3 … without a gap, each record's prev
// is the hash of the one before, each hash is right, and the file ends with a
// newline. It returns the number of records, or an error naming the first line that
// fails.
func Verify(r io.Reader) (int, error) {
	var c chain
	err := c.file(r, "log", "")
	return c.n, err
}

// VerifyFile is VerifyLog's count of records.
func VerifyFile(path string) (int, error) {
	sum, err := VerifyLog(path)
	return sum.Records, err
}

// Summary is what verifying an audit log found: how many records it holds, the
// newest one's hash (the chain's head: written down elsewhere, it anchors the log),
// how many files (segments and the current file) it spans, and whether the head
// file was there to check the end against.
type Summary struct {
	Records  int
	LastHash string
	Files    int
	// HeadMissing is true when PATH.head does not exist: then records removed from
	// the end of the log cannot be detected.
	HeadMissing bool
	// Sealed, when the log was started by Seal, names the log it moved aside.
	Sealed *Link
}

// segment is one closed segment of a log: PATH.NNNNNN.
type segment struct {
	n    int
	path string
}

// segments lists the closed segments of the log at path, oldest first.
func segments(path string) ([]segment, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var segs []segment
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base+".")
		if !ok || len(rest) < 6 || strings.Trim(rest, "0123456789") != "" {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n <= 0 {
			continue
		}
		segs = append(segs, segment{n: n, path: filepath.Join(dir, e.Name())})
	}
	slices.SortFunc(segs, func(a, b segment) int { return a.n - b.n })
	return segs, nil
}

func segmentName(path string, n int) string { return fmt.Sprintf("%s.%06d", path, n) }

// VerifyLog checks the audit log at path across all its files: the closed segments
// PATH.000001, PATH.000002, … in order, then PATH itself, as one chain (each
// segment's first record names the segment before it and its last record), and the
// chain against the head file beside it (PATH.head): records removed from the end
// leave the head naming a record the log no longer has. It reads each file once,
// front to back. Every file is opened as airlock opens its private files (no link
// followed, no FIFO waited on, only the user's own private files). The files are
// opened, measured and the head read under the log's lock, so a process appending
// meanwhile cannot make a record look cut; what is appended after that is not
// checked. It proves the files are one unbroken chain that ends where its head file
// says; it cannot prove that nobody who could rewrite both rewrote both (see
// docs/secrets-and-state.md).
func VerifyLog(path string) (Summary, error) { return verifyLog(path, true, nil) }

// Walk is VerifyLog handing fn each record of the log, in order across its segments,
// as it is checked: its kind and its line (without the newline, at most the longest
// record airlock writes). Only records that verify reach fn, so a reader of the log
// (the rules' match counts) counts nothing that the chain does not vouch for; the
// walk ends at the first damage, or at fn's first error, and returns it.
func Walk(path string, fn func(kind string, line []byte) error) (Summary, error) {
	return verifyLog(path, true, fn)
}

// ErrNoLog is returned (wrapped) by VerifyLog when there is no audit log at the
// path at all: no file, no segment and no head (a folder that does not exist
// included). A head whose log is gone is not ErrNoLog: its records were removed.
var ErrNoLog = errors.New("there is no audit log")

// verifyLog is VerifyLog; with lock false the caller holds the log's lock.
func verifyLog(path string, lock bool, visit func(kind string, line []byte) error) (Summary, error) {
	var sum Summary
	snap, err := snapshot(path, lock)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return sum, missingLog(path)
		}
		return sum, err
	}
	defer snap.close()
	c := chain{visit: visit}
	if snap.headErr == nil {
		c.head = &snap.head
	} else if errors.Is(snap.headErr, os.ErrNotExist) {
		sum.HeadMissing = true
	}
	prevFile := ""
	for i, f := range snap.files {
		name := filepath.Base(f.path)
		before := c.n
		err := c.file(io.NewSectionReader(f.f, 0, f.size), name, prevFile)
		sum.Records, sum.LastHash, sum.Files = c.n, c.prev, i+1
		if err != nil {
			return sum, err
		}
		if i == 0 && c.n > before {
			if first, ok := firstRecord(f.f); ok && first.Kind == "sealed" {
				sum.Sealed = first.Previous
			}
		}
		if c.n > before {
			prevFile = name
		}
	}
	if snap.headErr != nil {
		if errors.Is(snap.headErr, os.ErrNotExist) {
			return sum, nil
		}
		return sum, fmt.Errorf("%s.head: %v", path, snap.headErr)
	}
	switch {
	case snap.head.Seq > c.seq:
		return sum, fmt.Errorf("the log ends at record %d but record %d was written: %d records removed from the end", c.seq, snap.head.Seq, snap.head.Seq-c.seq)
	case snap.head.Seq > 0 && !c.headMatched:
		return sum, fmt.Errorf("record %d does not match the head: the log was changed", snap.head.Seq)
	}
	return sum, nil
}

// missingLog says why the log at path, whose file (or folder) does not exist, cannot
// be verified: ErrNoLog when nothing of it is there, or, when its head is, that
// its records were removed.
func missingLog(path string) error {
	head, herr := readHead(path)
	switch {
	case errors.Is(herr, os.ErrNotExist):
		if segs, err := segments(path); err == nil && len(segs) > 0 {
			return fmt.Errorf("%s is missing beside its %d closed segments", filepath.Base(path), len(segs))
		}
		return fmt.Errorf("%w at %s", ErrNoLog, path)
	case herr != nil:
		return fmt.Errorf("%s is missing, and %s.head: %v", filepath.Base(path), path, herr)
	}
	return fmt.Errorf("%s is missing but its head names record %d: %d records removed", filepath.Base(path), head.Seq, head.Seq)
}

// firstRecord decodes the first line of f (best effort: it was verified already).
func firstRecord(f *os.File) (Record, bool) {
	var r Record
	// A sealed record holds no arguments: its fields take at most fieldsBytes.
	line, err := bufio.NewReaderSize(io.NewSectionReader(f, 0, fieldsBytes+4096), fieldsBytes+4096).ReadSlice('\n')
	if err != nil && err != bufio.ErrBufferFull {
		return r, false
	}
	return r, json.Unmarshal(line, &r) == nil
}

type openFile struct {
	path string
	f    *os.File
	size int64
}

// logSnapshot is every file of a log opened and measured at one moment.
type logSnapshot struct {
	files   []openFile // closed segments, oldest first, then the current file
	head    headRecord
	headErr error
}

func (s *logSnapshot) close() {
	for _, f := range s.files {
		f.f.Close()
	}
}

// snapshot opens the files of the log at path, measures them and reads the head,
// under the log's lock when there is one (a log nobody appended to has no lock
// file, and verify creates none).
func snapshot(path string, lock bool) (*logSnapshot, error) {
	if lock {
		lf, err := statefile.Open(path + ".lock")
		switch {
		case err == nil:
			if lf, _, err = lockLog(path, lf, nil); err != nil {
				return nil, err
			}
			defer lf.Close()
			defer statefile.Unlock(lf)
		case !errors.Is(err, os.ErrNotExist):
			return nil, err
		}
	}
	segs, err := segments(path)
	if err != nil {
		return nil, err
	}
	s := &logSnapshot{}
	add := func(p string, mustExist bool) error {
		f, err := statefile.Open(p)
		if err != nil {
			if !mustExist && errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		st, err := statFile(f)
		var end int64
		if err == nil {
			end, err = recordsEnd(f, st.size) // the fill is no record (fill.go)
		}
		if err != nil {
			f.Close()
			return err
		}
		s.files = append(s.files, openFile{path: p, f: f, size: end})
		return nil
	}
	for i, sg := range segs {
		if sg.n != i+1 {
			s.close()
			return nil, fmt.Errorf("segment %s is missing", filepath.Base(segmentName(path, i+1)))
		}
		if err := add(sg.path, true); err != nil {
			s.close()
			return nil, err
		}
	}
	if err := add(path, len(segs) == 0); err != nil {
		s.close()
		return nil, err
	}
	s.head, s.headErr = readHead(path)
	return s, nil
}

// tail is what readTail found at the end of a log's file.
type tail struct {
	seq  uint64 // the newest record (0: none)
	hash string
	// problem says why the log may not be appended to ("" when it may); notice names
	// a damaged record before the head's.
	problem, notice string
	// headChecked: the head's record was among those read, and headMatches: its
	// hash is the head's.
	headChecked, headMatches bool
}

// tailWindow is how much of a file's end readTail checks record by record: the head
// lags the end by at most a delayed sync's records, far fewer.
const tailWindow = 256 << 10

// readTail checks the last records of the file f (size bytes) as a chain: the
// last line whole, each record in the last tailWindow bytes sound and joined to the
// one before, and the record the head names matching it. Damage at or after the
// head's record (or anywhere in the window without a head) is a problem: appending
// after it would bury it; damage before is a notice.
func readTail(f *os.File, size int64, head headRecord) (tail, error) {
	var t tail
	if size == 0 {
		return t, nil
	}
	// Read back from the end until the window holds tailWindow bytes and one
	// whole line, or the start of the file.
	chunk := int64(64 << 10)
	var buf []byte
	off := size
	for off > 0 {
		// A long last record is read in a few steps, not many, and never more
		// of it than the longest line airlock writes and its newline, and the
		// newline before it.
		n := min(chunk, off, max(max(int64(maxRecordBytes)+2, tailWindow)-int64(len(buf)), 1))
		chunk *= 2
		off -= n
		b := make([]byte, n)
		if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
			return t, err
		}
		buf = append(b, buf...)
		if buf[len(buf)-1] != '\n' {
			t.problem = "the last record is cut short (no final newline)"
			return t, nil
		}
		nl := bytes.LastIndexByte(buf[:len(buf)-1], '\n')
		if nl < 0 && off > 0 && len(buf)-1 > maxRecordBytes {
			t.problem = fmt.Sprintf("its last line (ending at byte %d) is longer than airlock writes (over %d bytes)", size, maxRecordBytes)
			return t, nil
		}
		if int64(len(buf)) >= tailWindow && nl >= 0 {
			break
		}
	}
	// The window's lines, a run of blank lines (fill among records: damage) taken
	// as one, so that it costs one entry, not one per byte.
	var lines [][]byte
	first := true
	for l := range bytes.SplitSeq(buf[:len(buf)-1], []byte{'\n'}) {
		if first && off > 0 {
			first = false
			continue // only the end of a line
		}
		first = false
		if len(l) == 0 && len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
			continue
		}
		lines = append(lines, l)
	}
	// Only what the chain check reads of each record is kept: a window of many
	// short lines costs a few words each, not a whole record.
	type checked struct {
		rec struct {
			Seq              uint64
			Prev, Hash, Kind string
		}
		err error
	}
	errBlank := errors.New("not a record: a blank line")
	recs := make([]checked, len(lines))
	var r Record
	for i, l := range lines {
		switch {
		case len(l) == 0:
			recs[i].err = errBlank
			continue
		case len(l) > maxRecordBytes:
			recs[i].err = fmt.Errorf("a line longer than airlock writes (over %d bytes)", maxRecordBytes)
			continue
		}
		r = Record{}
		recs[i].err = checkLine(l, &r)
		recs[i].rec.Seq, recs[i].rec.Prev, recs[i].rec.Hash, recs[i].rec.Kind = r.Seq, r.Prev, r.Hash, r.Kind
	}
	last := recs[len(recs)-1]
	if last.err != nil {
		t.problem = "its last record is damaged (" + last.err.Error() + ")"
		return t, nil
	}
	t.seq, t.hash = last.rec.Seq, last.rec.Hash
	// Walk back from the end: the chain must hold down to the head's record.
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		var bad string
		switch {
		case r.err != nil:
			bad = fmt.Sprintf("a record before record %d is damaged (%v)", recs[min(i+1, len(recs)-1)].rec.Seq, r.err)
		case i > 0 && recs[i-1].err == nil && (r.rec.Seq != recs[i-1].rec.Seq+1 || r.rec.Prev != recs[i-1].rec.Hash):
			bad = fmt.Sprintf("record %d does not follow the record before it (a record was removed, moved or changed)", r.rec.Seq)
		case i == 0 && off == 0 && (r.rec.Seq != 1 || r.rec.Prev != "") && r.rec.Kind != "segment":
			bad = fmt.Sprintf("the file begins at record %d, not 1", r.rec.Seq)
		}
		if r.err == nil && head.Seq > 0 && r.rec.Seq == head.Seq {
			t.headChecked, t.headMatches = true, r.rec.Hash == head.Hash
		}
		if bad == "" {
			continue
		}
		if t.headChecked || (head.Seq > 0 && r.err == nil && r.rec.Seq < head.Seq) {
			t.notice = bad
		} else {
			t.problem = bad
		}
		break
	}
	return t, nil
}
