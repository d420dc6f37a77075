package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// TokenLine is one agent token as the list shows it: its name, the context its
// agents' calls run in, and when it was added (zero for the default token).
type TokenLine struct {
	Name, Context string
	Created       time.Time
}

// WriteTokenList prints `airlock gateway token list`: the default token def (kept
// in defaultPath) and each named token with its context and when it was added,
// never a value (the file holds none).
func WriteTokenList(w io.Writer, def TokenLine, list []TokenLine, defaultPath string) {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCONTEXT\tADDED")
	fmt.Fprintf(tw, "%s\t%s\t%s\n", def.Name, def.Context, "(kept in "+defaultPath+")")
	for _, t := range list {
		// Names are checked when the file is read (a-z, 0-9, _ and -): nothing to escape.
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.Context, t.Created.Local().Format(time.DateTime))
	}
	tw.Flush()
}
