package cli

import (
	"io"
	"time"
)

// linePipe feeds lines one at a time, as a terminal in canonical mode does (each
// read returns at most one line, so no answer is read ahead by an earlier question).
type linePipe struct{ w *io.PipeWriter }

func ioPipe() (*io.PipeReader, linePipe) {
	r, w := io.Pipe()
	return r, linePipe{w}
}

func (p linePipe) line(s string) {
	_, _ = p.w.Write([]byte(s + "\n"))
	time.Sleep(20 * time.Millisecond)
}
