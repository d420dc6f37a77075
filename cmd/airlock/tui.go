package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/charmbracelet/x/term"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/ui"
)

// wantTUI reports whether to open the TUI: both ends are a terminal and the person
// did not ask for printed output.
func wantTUI(stdin io.Reader, stdout io.Writer, noTUI bool) bool {
	if noTUI {
		return false
	}
	in, ok := stdin.(*os.File)
	if !ok || !term.IsTerminal(in.Fd()) {
		return false
	}
	out, ok := stdout.(*os.File)
	return ok && term.IsTerminal(out.Fd())
}

// runTUI runs the TUI on m until the person quits, then closes m (pending approvals
// are denied).
func runTUI(ctx context.Context, m *session.Manager, opts ui.Options, stderr io.Writer) int {
	defer m.Close()
	if err := ui.Run(ctx, m, opts); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	return 0
}
