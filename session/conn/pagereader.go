package conn

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"time"
	"unicode/utf8"

	"github.com/airlock-mcp/airlock/internal/jsonlex"
)

// pageReader sits between a stdio server's stdout and go-sdk's reader. While a
// tools/list request is in flight it reads whole lines, and a line that is a plain
// response to that request is split into its tools here, from the bytes read: the
// capture keeps the page, and go-sdk gets the same response with an empty tools list.
// go-sdk's stdio reader would otherwise copy the page twice and decode it once more
// (its json.Decoder, then the message's own Unmarshal), and the capture a third time,
// for a result whose tools go-sdk is handed empty anyway (captureConn.Read). At
// 10,000 tools that was most of the memory a first listing touched.
//
// A line is inspected only where a message starts: the reader follows the structure
// of every byte it hands on (depth and strings), so a line inside a message that
// spans lines is never taken for one. Everything else passes byte for byte, and every
// line the fast path does not fully understand (another key in the envelope, an
// escaped or case-variant key, a repeated member, an id that is not a plain integer,
// a result that is not an object) passes unchanged, to be captured on the old path
// (captureConn.Read, encoding/json), which decides exactly as before. An inspected
// line that is not one complete JSON object (a server that pretty-prints its messages
// over several lines, which go-sdk's reader accepts, or one that is not JSON) turns
// the fast path off for the connection: such a server keeps the old path whole.
//
// A line is held back only while a listing is in flight, and only until its newline:
// a server that ends a message without one (go-sdk's reader accepts that when nothing
// follows) gets its bytes passed on after holdWait without more input, so it is never
// left waiting. Without read deadlines on the pipe (Windows) nothing is held and the
// fast path is off.
type pageReader struct {
	src   io.Reader
	dl    deadliner // nil: the pipe has no read deadlines; never hold
	capt  *Capture
	limit int // longest line inspected; a longer one passes unchanged

	buf     []byte // the read buffer (read)
	full    bool   // the last read filled buf: the next one gets a larger one
	in      []byte // bytes read and not yet handed on (a part of buf)
	out     []byte // bytes to hand go-sdk next
	midLine bool   // the bytes handed on last did not end a line
	off     bool   // the fast path is off for this connection
	err     error  // the read error to return once in and out are empty

	// Where the bytes handed on leave go-sdk's reader: depth is how many objects
	// and arrays are open, inStr and esc whether it is inside a string (after a
	// backslash). A line is inspected only when it starts a message (depth 0):
	// a server's message may span lines, and one of its lines may look like a
	// response of its own.
	depth      int
	inStr, esc bool
}

type deadliner interface{ SetReadDeadline(time.Time) error }

// pageReadMin and pageReadMax bound the read buffer (pageReader.read): it starts
// small, so that a quiet server (a handshake and a short listing) costs a few KiB
// rather than 64 KiB from its first read (a fan-out to 20 servers put 1.3 MB of fresh
// memory, with its page faults and an early collection, into its start), and grows to
// the pipe's usual capacity for a server that streams megabytes.
const (
	pageReadMin = 4 << 10
	pageReadMax = 64 << 10
)

// holdWait is how long a line held back waits for more bytes before it is passed on
// as it is.
const holdWait = 50 * time.Millisecond

func newPageReader(src io.Reader, capt *Capture, limit int) *pageReader {
	r := &pageReader{src: src, capt: capt, limit: limit, buf: make([]byte, pageReadMin)}
	if d, ok := src.(deadliner); ok && d.SetReadDeadline(time.Time{}) == nil {
		r.dl = d
	} else {
		r.off = true
	}
	return r
}

func (r *pageReader) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if len(r.in) == 0 {
			if r.err != nil {
				return 0, r.err
			}
			n, err := r.read()
			r.in, r.err = r.buf[:n], err
			continue
		}
		if r.off || r.midLine || r.depth != 0 || r.inStr || !r.capt.listing() {
			r.passLine()
			continue
		}
		r.out = r.inspect(r.holdLine())
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// read reads from the server into buf, first replacing buf with one twice its size
// (up to pageReadMax) when the last read filled it. Called only when nothing refers
// to buf's bytes any more: in and out are empty, and a held line has its own copy.
func (r *pageReader) read() (int, error) {
	if r.full && len(r.buf) < pageReadMax {
		r.buf = make([]byte, min(2*len(r.buf), pageReadMax))
	}
	n, err := r.src.Read(r.buf)
	r.full = n == len(r.buf)
	return n, err
}

// passLine hands on the bytes read up to and including the next newline.
func (r *pageReader) passLine() {
	n := len(r.in)
	if i := bytes.IndexByte(r.in, '\n'); i >= 0 {
		n = i + 1
	}
	r.out, r.in = r.in[:n], r.in[n:]
	r.midLine = r.out[len(r.out)-1] != '\n'
	r.track(r.out)
}

// track follows the structure of b, bytes handed on unread: after them go-sdk's
// reader is inside a value when depth > 0 or inStr. Bytes that close more than was
// opened are not JSON go-sdk reads; the fast path is turned off.
func (r *pageReader) track(b []byte) {
	if r.off {
		return
	}
	for _, c := range b {
		if r.inStr {
			switch {
			case r.esc:
				r.esc = false
			case c == '\\':
				r.esc = true
			case c == '"':
				r.inStr = false
			}
			continue
		}
		switch c {
		case '"':
			r.inStr = true
		case '{', '[':
			r.depth++
		case '}', ']':
			r.depth--
		}
	}
	if r.depth < 0 {
		r.off = true
	}
}

// holdLine reads until the line that starts r.in ends and returns it with its
// newline; owned says whether the line has a buffer of its own (a page the capture
// keeps refers to its bytes). It returns an unfinished line when the server sends
// nothing for holdWait, when the line grows past the limit, or when reading fails;
// r.midLine is set then.
func (r *pageReader) holdLine() (line []byte, owned bool) {
	if i := bytes.IndexByte(r.in, '\n'); i >= 0 {
		line, r.in = r.in[:i+1], r.in[i+1:]
		return line, false
	}
	line = append(make([]byte, 0, 2*len(r.in)+len(r.buf)), r.in...)
	r.in = nil
	for r.err == nil && len(line) <= r.limit {
		_ = r.dl.SetReadDeadline(time.Now().Add(holdWait))
		n, err := r.read()
		_ = r.dl.SetReadDeadline(time.Time{})
		waited := errors.Is(err, os.ErrDeadlineExceeded)
		if !waited {
			r.err = err
		}
		chunk := r.buf[:n]
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			r.in = chunk[i+1:]
			return append(line, chunk[:i+1]...), true
		}
		line = append(line, chunk...)
		if waited {
			break
		}
	}
	r.midLine = true
	return line, true
}

// inspect returns what go-sdk gets for line: the line itself, or, when it is a plain
// response to the tools/list request in flight and the capture took its page, the same
// response with an empty tools list.
func (r *pageReader) inspect(line []byte, owned bool) []byte {
	if r.midLine || len(line) > r.limit {
		// Not a whole line, or longer than go-sdk reads (its own limit drops the
		// connection): passed as it is.
		r.track(line)
		return line
	}
	end := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	if len(bytes.TrimLeft(end, " \t\r\n")) == 0 {
		return line
	}
	if end[0] != '{' || end[len(end)-1] != '}' || !validJSON(end) {
		r.off = true
		return line
	}
	id, page, ok := splitListResponse(end)
	if !ok {
		return line
	}
	if !owned {
		// The line is in the read buffer, which the next read reuses.
		end = bytes.Clone(end)
		id, page, _ = splitListResponse(end)
	}
	if !r.capt.deliver(string(id), page, end) {
		return line
	}
	out := make([]byte, 0, 64+len(id))
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"result":{"tools":[]}}`...)
	return append(out, line[len(end):]...)
}

// Close closes the server's stdout.
func (r *pageReader) Close() error {
	if c, ok := r.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// splitListResponse reads msg, one valid JSON object, as a response carrying a
// tools/list page: exactly the members "jsonrpc" ("2.0"), "id" (a plain integer) and
// "result" (an object), each once; in the result, "tools" (an array) once and
// "nextCursor" (a string without escapes) at most once, every key plain ASCII and no
// other key a case variant of those two, since encoding/json would match it. The tools
// are the exact bytes of each item, as encoding/json's RawMessage holds them. Anything
// else is not ok, and is left to the old path.
func splitListResponse(msg []byte) (id []byte, page *rawPage, ok bool) {
	// One walk over the message: the result is split where it stands, not skipped
	// and walked again (each pass over a page of 1,000 tools was 0.1 ms).
	page = &rawPage{}
	seen := 0
	ok = eachMember(msg, 0, func(key []byte, i int) int {
		var bit, end int
		switch string(key) {
		case "jsonrpc":
			bit, end = 1, skipValue(msg, i)
			if string(msg[i:end]) != `"2.0"` {
				return -1
			}
		case "id":
			bit, end = 2, skipValue(msg, i)
			if !plainInt(msg[i:end]) {
				return -1
			}
			id = msg[i:end]
		case "result":
			if bit = 4; seen&bit != 0 || msg[i] != '{' {
				return -1
			}
			end = splitResult(msg, i, page)
		default:
			return -1
		}
		if end < 0 || seen&bit != 0 {
			return -1
		}
		seen |= bit
		return end
	}) >= 0
	if !ok || seen != 7 {
		return nil, nil, false
	}
	return id, page, true
}

// splitResult fills page from the result object at b[i] and returns the index past
// it, or -1 when the result is not a plain page.
func splitResult(b []byte, i int, page *rawPage) int {
	var tools, cursor bool
	end := eachMember(b, i, func(key []byte, i int) int {
		switch {
		case string(key) == "tools":
			if tools || b[i] != '[' {
				return -1
			}
			tools = true
			var end int
			page.Tools, end = splitItems(b, i)
			return end
		case string(key) == "nextCursor":
			end := skipValue(b, i)
			val := b[i:end]
			if cursor || val[0] != '"' || bytes.IndexByte(val, '\\') >= 0 || !utf8.Valid(val) {
				return -1
			}
			cursor = true
			page.NextCursor = string(val[1 : len(val)-1])
			return end
		case bytes.EqualFold(key, []byte("tools")) || bytes.EqualFold(key, []byte("nextCursor")):
			return -1
		}
		return skipValue(b, i)
	})
	if !tools {
		return -1
	}
	return end
}

// eachMember calls f with the raw key (between its quotes) and the index of the value
// of every member of the object at b[i], valid JSON, until f returns -1; f returns
// the index just past the value. eachMember returns the index past the object, or -1
// when f did, or when a key holds an escape or a byte outside printable ASCII.
func eachMember(b []byte, i int, f func(key []byte, i int) int) int {
	i = skipWS(b, i+1)
	if b[i] == '}' {
		return i + 1
	}
	for {
		// b[i] is the quote opening a key.
		j := i + 1
		for b[j] != '"' {
			if b[j] == '\\' || b[j] < 0x20 || b[j] >= 0x7f {
				return -1
			}
			j++
		}
		key := b[i+1 : j]
		i = skipWS(b, j+1) + 1 // past the colon
		i = skipWS(b, i)
		if i = f(key, i); i < 0 {
			return -1
		}
		i = skipWS(b, i)
		if b[i] == '}' {
			return i + 1
		}
		i = skipWS(b, i+1) // past the comma
	}
}

// splitItems returns the raw items of the array at b[i], valid JSON, and the index
// past it.
func splitItems(b []byte, i int) ([]json.RawMessage, int) {
	var items []json.RawMessage
	i = skipWS(b, i+1)
	if b[i] == ']' {
		return []json.RawMessage{}, i + 1
	}
	for {
		end := skipValue(b, i)
		items = append(items, json.RawMessage(b[i:end:end]))
		i = skipWS(b, end)
		if b[i] == ']' {
			return items, i + 1
		}
		i = skipWS(b, i+1)
	}
}

// skipValue returns the index just past the JSON value starting at b[i]; b is valid.
func skipValue(b []byte, i int) int { return jsonlex.SkipValid(b, i) }

func skipWS(b []byte, i int) int { return jsonlex.Space(b, i) }

// plainInt reports whether v is an integer literal written as go-sdk's client writes
// its request ids: no sign, no leading zero, at most 18 digits.
func plainInt(v []byte) bool {
	if len(v) == 0 || len(v) > 18 || (v[0] == '0' && len(v) > 1) {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
