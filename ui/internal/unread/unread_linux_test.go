package unread

import (
	"os"
	"testing"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/creack/pty"
)

// TestUnreadInput_SeesKeysTheProgramHasNotRead: the input guard's view of the
// terminal (docs/approval.md): bytes typed into the terminal and not yet read are
// reported until the program reads them; a pipe is not a terminal and reports
// nothing (the program's keys come from elsewhere then).
func TestUnreadInput_SeesKeysTheProgramHasNotRead(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	// Raw, as the TUI runs it: no line editing holds the keys back.
	if _, err := term.MakeRaw(tty.Fd()); err != nil {
		t.Fatal(err)
	}
	unread := Input(tty)
	if unread == nil {
		t.Fatal("a terminal gave no way to see unread keys")
	}
	if unread() {
		t.Fatal("unread keys reported before any was typed")
	}
	if _, err := ptmx.Write([]byte("ab")); err != nil {
		t.Fatal(err)
	}
	// The kernel hands typed bytes to the terminal's input queue asynchronously.
	deadline := time.Now().Add(5 * time.Second)
	for !unread() {
		if time.Now().After(deadline) {
			t.Fatal("two typed bytes were never reported unread")
		}
		time.Sleep(time.Millisecond)
	}
	buf := make([]byte, 8)
	for got := 0; got < 2; {
		n, err := tty.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got += n
	}
	if unread() {
		t.Fatal("keys still reported unread after the program read them")
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if Input(r) != nil {
		t.Fatal("a pipe was treated as the terminal")
	}
}
