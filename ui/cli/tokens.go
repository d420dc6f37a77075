package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/airlock-mcp/airlock/session/gateway"
)

// WriteTokenList prints `airlock gateway token list`: the default token (kept in
// defaultPath) and each named token with its context and when it was added, never
// a value (the file holds none).
func WriteTokenList(w io.Writer, list []gateway.NamedToken, defaultPath string) {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCONTEXT\tADDED")
	fmt.Fprintf(tw, "%s\t%s\t%s\n", gateway.DefaultTokenName, gateway.AgentContext(gateway.DefaultTokenName), "(kept in "+defaultPath+")")
	for _, t := range list {
		// Names are checked when the file is read (a-z, 0-9, _ and -): nothing to escape.
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, gateway.AgentContext(t.Name), t.Created.Local().Format(time.DateTime))
	}
	tw.Flush()
}
