package conn

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"
)

// Ring keeps the last lines written to it, bounded in bytes, so that a server that
// floods its stderr cannot grow airlock's memory. Lines longer than the bound are cut
// and say so. Ring is safe for concurrent use.
type Ring struct {
	mu      sync.Mutex
	max     int
	size    int
	lines   []string
	dropped int
	partial []byte
	onLine  func(string)
	drains  int // ReadFrom calls (for tests)
}

// ringReadMin and ringReadMax bound ReadFrom's read buffer: a quiet server's stderr
// costs half a KiB instead of io.Copy's 32 KiB, a flooding one is read in 32 KiB.
const (
	ringReadMin = 512
	ringReadMax = 32 << 10
)

// maxLineBytes bounds one stderr line; the rest of the line is counted, not kept.
const maxLineBytes = 4096

// NewRing returns a ring that keeps at most maxBytes of the newest lines and calls
// onLine (if not nil) for each complete line, outside its lock.
func NewRing(maxBytes int, onLine func(string)) *Ring {
	return &Ring{max: maxBytes, onLine: onLine}
}

// Write splits p into lines and keeps them; it never fails, so a pipe drained into a
// Ring is drained continuously whatever the child writes.
func (r *Ring) Write(p []byte) (int, error) {
	n := len(p)
	var done []string
	r.mu.Lock()
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			r.appendPartial(p)
			break
		}
		r.appendPartial(p[:i])
		line := r.takePartial()
		r.keep(line)
		done = append(done, line)
		p = p[i+1:]
	}
	r.mu.Unlock()
	if r.onLine != nil {
		for _, l := range done {
			r.onLine(l)
		}
	}
	return n, nil
}

// ReadFrom drains src into the ring until EOF (io.ReaderFrom). os/exec drains a
// child's stderr into its Writer with io.Copy, which calls this: the read buffer
// starts at ringReadMin and doubles, up to ringReadMax, each time a read fills it.
func (r *Ring) ReadFrom(src io.Reader) (int64, error) {
	r.mu.Lock()
	r.drains++
	r.mu.Unlock()
	buf := make([]byte, ringReadMin)
	var total int64
	for {
		n, err := src.Read(buf)
		if n > 0 {
			_, _ = r.Write(buf[:n])
			total += int64(n)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		if n == len(buf) && len(buf) < ringReadMax {
			buf = make([]byte, min(2*len(buf), ringReadMax))
		}
	}
}

func (r *Ring) appendPartial(p []byte) {
	room := maxLineBytes - len(r.partial)
	if room <= 0 {
		r.dropped += len(p)
		return
	}
	if len(p) > room {
		r.dropped += len(p) - room
		p = p[:room]
	}
	r.partial = append(r.partial, p...)
}

func (r *Ring) takePartial() string {
	s := string(r.partial)
	if r.dropped > 0 {
		s += " … (line cut: " + strconv.Itoa(r.dropped) + " more bytes)"
		r.dropped = 0
	}
	r.partial = r.partial[:0]
	return s
}

func (r *Ring) keep(line string) {
	r.lines = append(r.lines, line)
	r.size += len(line)
	for r.size > r.max && len(r.lines) > 1 {
		r.size -= len(r.lines[0])
		r.lines[0] = ""
		r.lines = r.lines[1:]
	}
	// Compact occasionally so the backing array does not grow without bound.
	if cap(r.lines) > 4*len(r.lines)+64 {
		r.lines = append([]string(nil), r.lines...)
	}
}

// Lines returns a copy of the kept lines, oldest first, plus any unterminated tail.
func (r *Ring) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), r.lines...)
	if len(r.partial) > 0 {
		out = append(out, string(r.partial))
	}
	return out
}

// Tail returns up to n of the newest lines joined with newlines.
func (r *Ring) Tail(n int) string {
	l := r.Lines()
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
