package unread

import (
	"os"

	"github.com/charmbracelet/x/term"
	"golang.org/x/sys/unix"
)

// Input reports whether the terminal f holds typed bytes the program has not
// read yet (the input guard's unread keys).
func Input(f *os.File) func() bool {
	fd := int(f.Fd())
	if !term.IsTerminal(f.Fd()) {
		return nil // a pipe: the program reads its keys elsewhere (/dev/tty)
	}
	return func() bool {
		n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
		return err == nil && n > 0
	}
}
