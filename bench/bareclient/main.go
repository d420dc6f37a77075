// Command bareclient is the reference that `airlock check` is measured against: a bare
// go-sdk client that starts one stdio server, initializes, lists its tools, prints how
// many, and exits. It does nothing airlock does beyond that (no classification, no
// pins, no hazards), so the ratio of the two is airlock's own cost.
//
// With -n N it starts N instances of the server at once, each with its own
// AIRLOCK_BENCH_INSTANCE (01, 02, ...) as bench/run's fan-out configs give them, and
// connects to and lists every one concurrently: the fan-out a bare client gets on the
// same machine.
//
//	bareclient [-n N] COMMAND [ARGS...]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	n := flag.Int("n", 1, "instances of the server to start and list at once")
	flag.Parse()
	if flag.NArg() < 1 || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: bareclient [-n N] COMMAND [ARGS...]")
		os.Exit(2)
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "bareclient", Version: "1"}, nil)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total int
		errs  []error
	)
	for i := 1; i <= *n; i++ {
		wg.Go(func() {
			cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
			if *n > 1 {
				cmd.Env = append(os.Environ(), fmt.Sprintf("AIRLOCK_BENCH_INSTANCE=%02d", i))
			}
			count, err := list(ctx, client, cmd)
			mu.Lock()
			defer mu.Unlock()
			total += count
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		fmt.Fprintln(os.Stderr, errs[0])
		os.Exit(1)
	}
	fmt.Println(total, "tools")
}

// list connects to the server cmd starts, lists its tools and closes it.
func list(ctx context.Context, client *mcp.Client, cmd *exec.Cmd) (int, error) {
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return 0, err
	}
	defer cs.Close()
	n := 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
