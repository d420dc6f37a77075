// Command waiting measures what the bound on waiting calls costs airlock: a session Manager with
// its agent gateway on 127.0.0.1, one in-process upstream write tool, and N agents
// (each its own named token, so each its own context) that each send one call with a
// SIZE-byte argument at the same moment. Nobody answers: the calls that fit the bounds
// wait until the approval timeout, the rest are refused at once. It prints how many
// waited and how many were refused, and the peak resident set size of its own process
// (VmHWM from /proc/self/status), under the airlock binary's own collector policy
// (internal/gctune). The agents stream their request bodies from a
// generator, so the figure is airlock's, not the agents'.
//
// With -calls N each agent sends N such calls at once in its one session.
//
//	go run ./bench/waiting [-agents 120] [-calls 1] [-size 4000000] [-timeout 5s]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/gctune"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/trust"
)

var heapFile string

const defaultToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func main() {
	agents := flag.Int("agents", 120, "concurrent agents, each its own session")
	calls := flag.Int("calls", 1, "concurrent calls of each agent, in its one session")
	size := flag.Int("size", 4_000_000, "bytes of each call's argument")
	timeout := flag.Duration("timeout", 5*time.Second, "approval timeout")
	flag.StringVar(&heapFile, "heap", "", "write a heap profile here while the most calls wait")
	flag.Parse()
	if err := measure(*agents, *calls, *size, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "waiting:", err)
		os.Exit(1)
	}
}

func measure(agents, calls, size int, timeout time.Duration) error {
	up := mcp.NewServer(&mcp.Implementation{Name: "mail", Version: "1"}, nil)
	f := false
	up.AddTool(&mcp.Tool{Name: "send_email", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &f, OpenWorldHint: &f}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sent"}}}, nil
		})
	cfg := &config.Config{
		Policy:          trust.DefaultPolicy(),
		ApprovalTimeout: timeout,
		Servers: []config.Server{{Name: "mail", Transport: config.TransportStdio, Command: "unused", Trust: trust.Trusted,
			ConnectTimeout: 10 * time.Second, CallTimeout: 10 * time.Second}},
	}
	m := session.New(cfg, session.Options{InProcess: map[string]*mcp.Server{"mail": up}})
	defer m.Close()
	m.Start()
	if err := m.Wait(context.Background()); err != nil {
		return err
	}
	// The collector policy of the airlock binary's TUI, which hosts the gateway.
	gctune.Tune(false, gctune.Budget(cfg.Limits.WithDefaults().MaxWaitingBytes))
	go func() { // the UI's side: drain events, answer nothing
		for {
			if _, ok := m.Next(context.Background()); !ok {
				return
			}
		}
	}()
	dir, err := os.MkdirTemp("", "airlock-waiting-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tokens := make([]string, agents)
	for i := range tokens {
		if tokens[i], err = gateway.AddToken(dir, fmt.Sprintf("agent-%03d", i), time.Now()); err != nil {
			return err
		}
	}
	g, err := gateway.New(m, gateway.Options{Listen: "127.0.0.1:0", Token: defaultToken, TokensFile: gateway.TokensPath(dir)})
	if err != nil {
		return err
	}
	if err := g.Start(); err != nil {
		return err
	}
	defer g.Close()
	runtime.GC()
	before := status("VmHWM")

	var peakWaiting atomic.Int64
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				if n := int64(len(m.Engine().Pending())); n > peakWaiting.Load() {
					peakWaiting.Store(n)
					if heapFile != "" { // each new peak overwrites the profile
						if f, err := os.Create(heapFile); err == nil {
							_ = pprof.WriteHeapProfile(f)
							f.Close()
						}
					}
				}
			}
		}
	}()
	var refused, denied, other atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	begin := time.Now()
	for i := range agents {
		token := tokens[i]
		sid, err := initialize(g.URL(), token, fmt.Sprintf("agent-%03d", i))
		if err != nil {
			return err
		}
		for c := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				text, err := call(g.URL(), token, sid, 2+c, size)
				switch {
				case err != nil:
					other.Add(1)
					fmt.Fprintln(os.Stderr, "agent:", err)
				case strings.Contains(text, "already hold") || strings.Contains(text, "already wait"):
					refused.Add(1)
				case strings.Contains(text, "nobody answered"):
					denied.Add(1)
				default:
					other.Add(1)
					fmt.Fprintln(os.Stderr, "agent got:", text[:min(len(text), 200)])
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	close(stop)
	fmt.Printf("agents: %d, each %d call(s) at once in its session with a %d-byte argument; approval timeout %s\n", agents, calls, size, timeout)
	fmt.Printf("waited for a person (then timed out): %d; refused at once by the bounds: %d; other: %d\n", denied.Load(), refused.Load(), other.Load())
	fmt.Printf("most waiting at once: %d; took %s\n", peakWaiting.Load(), time.Since(begin).Round(time.Millisecond))
	fmt.Printf("VmHWM before:      %s\n", before)
	fmt.Printf("VmHWM (peak RSS):  %s\n", status("VmHWM"))
	return nil
}

func post(url, token, sid string, body io.Reader, n int64) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		return nil, err
	}
	req.ContentLength = n
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	return http.DefaultClient.Do(req)
}

func initialize(url, token, name string) (string, error) {
	b := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + name + `","version":"1"}}}`)
	resp, err := post(url, token, "", bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		return "", fmt.Errorf("initialize: status %d, no session id", resp.StatusCode)
	}
	b = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp, err = post(url, token, sid, bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return sid, nil
}

// call sends one tools/call whose argument is generated while it is sent, and
// returns the text of the answer.
func call(url, token, sid string, id, size int) (string, error) {
	head := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"mail__send_email","arguments":{"body":"`
	tail := `"}}}`
	body := io.MultiReader(strings.NewReader(head), io.LimitReader(xs{}, int64(size)), strings.NewReader(tail))
	resp, err := post(url, token, sid, body, int64(len(head)+size+len(tail)))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var sb strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		sb.WriteString(sc.Text())
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, sb.String())
	}
	return sb.String(), nil
}

type xs struct{}

func (xs) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func status(key string) string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
