package conn

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"testing"
)

// TestRing_DrainsWithABufferThatGrows: os/exec drains a child's stderr into the
// server's Ring with io.Copy, which hands the pipe to Ring.ReadFrom: the drain reads
// with ringReadMin bytes first and doubles, up to ringReadMax, while reads fill the
// buffer, so a quiet server's stderr costs half a KiB, not io.Copy's 32 KiB, and a
// flooding one is still drained in large reads. The lines kept are the same as when
// the bytes are written whole.
func TestRing_DrainsWithABufferThatGrows(t *testing.T) {
	var flood bytes.Buffer
	for i := range 5000 {
		fmt.Fprintf(&flood, "stderr line %d of a server that talks a lot\n", i)
	}
	flood.WriteString("an unfinished last line")

	src := &askedReader{data: slices.Clone(flood.Bytes())}
	drained := NewRing(1<<20, nil)
	if n, err := io.Copy(drained, src); err != nil || n != int64(flood.Len()) {
		t.Fatalf("io.Copy into the ring: %d bytes, %v; want %d, nil", n, err, flood.Len())
	}
	if first := src.asked[0]; first != ringReadMin {
		t.Errorf("the first read asked for %d bytes, want %d", first, ringReadMin)
	}
	if top := slices.Max(src.asked); top != ringReadMax {
		t.Errorf("the largest read asked for %d bytes, want %d after the buffer grew", top, ringReadMax)
	}
	whole := NewRing(1<<20, nil)
	_, _ = whole.Write(flood.Bytes())
	if got, want := drained.Lines(), whole.Lines(); !slices.Equal(got, want) {
		t.Fatalf("drained %d lines, written whole %d: not the same lines", len(got), len(want))
	}

	// The path os/exec takes: io.Copy from the read end of a real pipe, an *os.File,
	// reaches Ring.ReadFrom (its WriteTo falls back to io.Copy, which finds ReadFrom).
	rd, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = w.Write([]byte("one quiet line\n")); w.Close() }()
	quiet := NewRing(1<<20, nil)
	if _, err := io.Copy(quiet, rd); err != nil {
		t.Fatal(err)
	}
	rd.Close()
	if quiet.drains != 1 || !slices.Equal(quiet.Lines(), []string{"one quiet line"}) {
		t.Fatalf("a pipe drained by io.Copy: %d drains through ReadFrom, lines %q; want 1 and the line", quiet.drains, quiet.Lines())
	}
}
