// Command agent is the go-sdk agent of bench/run's gateway rows: it connects to an MCP
// server (streamable HTTP with -url, or a stdio command after the flags), calls one
// tool and prints one JSON line of figures. bench/agent/agent.mjs is the same agent on
// the TypeScript SDK, with the same flags and output.
//
//	agent -url URL [-token T] -tool NAME [-n 2000] [-warmup 100]        one session, calls in sequence: p50, p99
//	agent -url URL -tool NAME -c 16 -d 5s [-list]                        16 sessions calling in a loop: calls/s, p50, p99
//	agent -tool NAME [...] -- COMMAND ARGS...                            the same, each session starting its own stdio server
//
// With -c, every session first lists the tools and makes one call, then the agent
// prints {"connected":C} and, when -hold is set, waits for a line on stdin before the
// timed loop (so the runner can read the gateway's memory with every session open);
// -list lists the tools before every call.
//
// -protocol is 2025-11-25 by default, the newest version the TypeScript agent speaks:
// go-sdk v1.8.0 would otherwise ask for 2026-07-28, which supergateway 4.0.0 serves
// statelessly by starting its stdio server anew for every request.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type result struct {
	Calls      int     `json:"calls"`
	P50us      float64 `json:"p50_us"`
	P99us      float64 `json:"p99_us"`
	CallsPerS  float64 `json:"calls_per_s"`
	Sessions   int     `json:"sessions"`
	Error      string  `json:"error,omitempty"`
	SDKVersion string  `json:"sdk"`
}

func main() {
	url := flag.String("url", "", "streamable HTTP endpoint (else the stdio command after the flags)")
	token := flag.String("token", "", "bearer token")
	tool := flag.String("tool", "", "tool to call")
	arg := flag.String("args", `{"id":"mcp-overview"}`, "the call's arguments, JSON")
	n := flag.Int("n", 2000, "timed calls (one session)")
	warmup := flag.Int("warmup", 100, "calls before timing")
	c := flag.Int("c", 0, "concurrent sessions (0: one session, -n calls)")
	d := flag.Duration("d", 5*time.Second, "how long the concurrent sessions call")
	list := flag.Bool("list", false, "with -c: list the tools before every call")
	hold := flag.Bool("hold", false, "with -c: wait for a line on stdin after connecting")
	protocol := flag.String("protocol", "2025-11-25", "the protocol version to ask for (\"\" = go-sdk's newest)")
	flag.Parse()
	var args map[string]any
	if err := json.Unmarshal([]byte(*arg), &args); err != nil {
		fail(err)
	}
	connect := func(ctx context.Context) (*mcp.ClientSession, error) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench-agent", Version: "1"}, nil)
		var t mcp.Transport
		if *url != "" {
			hc := &http.Client{}
			if *token != "" {
				hc.Transport = bearer{*token}
			}
			t = &mcp.StreamableClientTransport{Endpoint: *url, HTTPClient: hc}
		} else {
			if flag.NArg() == 0 {
				return nil, fmt.Errorf("-url or a stdio command")
			}
			t = &mcp.CommandTransport{Command: exec.Command(flag.Arg(0), flag.Args()[1:]...)}
		}
		return client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: *protocol})
	}
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: *tool, Arguments: args}
	call := func(cs *mcp.ClientSession) (time.Duration, error) {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		took := time.Since(start)
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %s", contentText(res.Content))
		}
		return took, err
	}
	if *c == 0 {
		cs, err := connect(ctx)
		if err != nil {
			fail(err)
		}
		defer cs.Close()
		for range *warmup {
			if _, err := call(cs); err != nil {
				fail(err)
			}
		}
		lat := make([]time.Duration, 0, *n)
		start := time.Now()
		for range *n {
			t, err := call(cs)
			if err != nil {
				fail(err)
			}
			lat = append(lat, t)
		}
		print(summary(lat, time.Since(start), 1))
		return
	}
	sessions := make([]*mcp.ClientSession, *c)
	var wg sync.WaitGroup
	errs := make(chan error, *c)
	for i := range sessions {
		wg.Go(func() {
			cs, err := connect(ctx)
			if err == nil {
				_, err = cs.ListTools(ctx, nil)
			}
			if err == nil {
				_, err = call(cs)
			}
			if err != nil {
				errs <- err
				return
			}
			sessions[i] = cs
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		fail(err)
	default:
	}
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	fmt.Printf("{\"connected\":%d}\n", *c)
	if *hold {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	}
	var mu sync.Mutex
	var all []time.Duration
	start := time.Now()
	stop := start.Add(*d)
	for _, cs := range sessions {
		wg.Go(func() {
			var mine []time.Duration
			for time.Now().Before(stop) {
				if *list {
					if _, err := cs.ListTools(ctx, nil); err != nil {
						errs <- err
						return
					}
				}
				t, err := call(cs)
				if err != nil {
					errs <- err
					return
				}
				mine = append(mine, t)
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	took := time.Since(start)
	select {
	case err := <-errs:
		fail(err)
	default:
	}
	print(summary(all, took, *c))
}

func summary(lat []time.Duration, took time.Duration, sessions int) result {
	slices.Sort(lat)
	r := result{Calls: len(lat), Sessions: sessions, SDKVersion: "go-sdk"}
	if len(lat) > 0 {
		r.P50us = float64(lat[len(lat)/2].Nanoseconds()) / 1e3
		r.P99us = float64(lat[len(lat)*99/100].Nanoseconds()) / 1e3
		r.CallsPerS = float64(len(lat)) / took.Seconds()
	}
	return r
}

func print(r result) {
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
}

func fail(err error) {
	print(result{Error: err.Error(), SDKVersion: "go-sdk"})
	os.Exit(1)
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// contentText is a tool result's text blocks joined, for an error message: the
// blocks themselves are pointers, which %v would print as addresses.
func contentText(content []mcp.Content) string {
	var out []byte
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			if len(out) > 0 {
				out = append(out, "; "...)
			}
			out = append(out, t.Text...)
		}
	}
	if len(out) > 2000 {
		out = append(out[:2000], "…"...)
	}
	return string(out)
}
