// Command bareclient is the reference that `airlock check` is measured against: a bare
// go-sdk client that starts one stdio server, initializes, lists its tools, prints how
// many, and exits. It does nothing airlock does beyond that (no classification, no
// pins, no hazards), so the ratio of the two is airlock's own cost.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bareclient COMMAND [ARGS...]")
		os.Exit(2)
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "bareclient", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(os.Args[1], os.Args[2:]...)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	n := 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		n++
	}
	_ = cs.Close()
	fmt.Println(n, "tools")
}
