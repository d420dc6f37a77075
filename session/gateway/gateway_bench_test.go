package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/gctune"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/demo"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

// upstreamDocs serves the demo docs server over streamable HTTP on 127.0.0.1.
func upstreamDocs(b *testing.B) string {
	docs, _ := demo.New("docs")
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return docs }, nil))
	b.Cleanup(srv.Close)
	return srv.URL
}

func benchCalls(b *testing.B, cs *mcp.ClientSession, name string) {
	benchCallsWith(b, cs, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"id": "mcp-overview"}})
}

// largeText is a 100 KB text argument: prose, as a long prompt or a file's content
// pasted into a call would be, with no secret in it.
var largeText = strings.Repeat("how does the lethal trifecta arise from three tools? ", 100_000/53)

// benchLargeCalls is benchCalls for count_words (served as name) with largeText.
func benchLargeCalls(b *testing.B, cs *mcp.ClientSession, name string) {
	benchCallsWith(b, cs, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": largeText}})
}

// processWarm is the longer warm-up of a process's first benchmark. A process's
// first few hundred calls are slower than the rest (its heap grows to the collector's
// goal and is touched for the first time), and without it whichever benchmark ran
// first paid for that alone: the bare proxy's p50 over 300 calls was 237-263 µs run
// first in its process, 183-201 µs run after the gateway.
var processWarm sync.Once

// processWarmCalls is how many calls the first benchmark of a process makes before it
// is timed.
const processWarmCalls = 1000

func benchCallsWith(b *testing.B, cs *mcp.ClientSession, params *mcp.CallToolParams) {
	// The collector policy the airlock binary runs with (the TUI's: see gctune.Tune),
	// for every benchmark of this process alike: the first one to get here sets it.
	gctune.Tune(false, gctune.Budget(config.Limits{}.WithDefaults().MaxWaitingBytes))
	ctx := context.Background()
	warm := 20 // this connection's and these caches'
	processWarm.Do(func() { warm = processWarmCalls })
	for range warm {
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		durations = append(durations, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("call: %v", err)
		}
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkCallDirect is the reference: an agent calling the upstream server itself.
func BenchmarkCallDirect(b *testing.B) { benchCalls(b, dial(b, upstreamDocs(b)), "get_doc") }

// dial connects an agent to the streamable HTTP server at url, closed when b ends.
func dial(b *testing.B, url string) *mcp.ClientSession {
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// benchThroughGateway runs benchCalls for docs__get_doc through a gateway over a
// Manager of cfg with opts, from an agent connected with testToken.
func benchThroughGateway(b *testing.B, cfg *config.Config, opts session.Options) {
	benchGatewayWith(b, cfg, opts, func(cs *mcp.ClientSession) { benchCalls(b, cs, "docs__get_doc") })
}

// benchGatewayWith runs bench with an agent's session on a gateway over a Manager of
// cfg with opts.
func benchGatewayWith(b *testing.B, cfg *config.Config, opts session.Options, bench func(*mcp.ClientSession)) {
	m := session.New(cfg, opts)
	defer m.Close()
	m.Start()
	drainEvents(b, m)
	_ = m.Wait(context.Background())
	// The token files of a state folder, followed as the binary follows them: every
	// request looks at gateway.token and the named tokens file (absent here).
	dir, token := b.TempDir(), strings.Repeat("be", 32) // as RotateToken writes one
	if err := os.WriteFile(gateway.TokenPath(dir), []byte(token+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	written := time.Now()
	g, err := gateway.New(m, gateway.Options{Listen: "127.0.0.1:0", Token: token,
		TokenFile: gateway.TokenPath(dir), TokensFile: gateway.TokensPath(dir)})
	if err != nil {
		b.Fatal(err)
	}
	if err := g.Start(); err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	// A state folder's token file is older than a few seconds but for the moments
	// after it is written or rotated, when every look reads it again
	// (statefile.Settle): the calls are timed once it settled, as they are run.
	time.Sleep(time.Until(written.Add(statefile.Settle + 100*time.Millisecond)))
	cs, err := dialGateway(b, g, token, "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	bench(cs)
}

// upstreamCounter serves one read-only tool over streamable HTTP on 127.0.0.1,
// count_words, whose own work is small beside moving its argument: what a call with
// a large argument costs the hops in between stands out.
func upstreamCounter(b *testing.B) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "counter", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "count_words", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}},
		func(_ context.Context, _ *mcp.CallToolRequest, in in) (*mcp.CallToolResult, any, error) {
			n := len(strings.Fields(in.Text))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(n) + " words"}}}, nil, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	b.Cleanup(srv.Close)
	return srv.URL
}

// benchDocsConfig is the demo docs server of upstreamDocs as a trusted HTTP server.
func benchDocsConfig(b *testing.B) *config.Config {
	return sessiontest.NewConfig(config.Server{Name: "docs", Transport: config.TransportHTTP, URL: upstreamDocs(b), Trust: trust.Trusted, ConnectTimeout: 10 * time.Second})
}

// BenchmarkCallThroughGateway is the same auto-allowed call made through airlock: agent
// -> gateway (token, allowlists) -> approval engine (allow by policy) -> upstream.
func BenchmarkCallThroughGateway(b *testing.B) {
	benchThroughGateway(b, benchDocsConfig(b), session.Options{})
}

// BenchmarkCallThroughGatewayAudited is BenchmarkCallThroughGateway with the audit log
// on, as airlock runs by default: every call's decision is synced before it is
// forwarded and its outcome is recorded after.
func BenchmarkCallThroughGatewayAudited(b *testing.B) {
	cfg := benchDocsConfig(b)
	audit, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer audit.Close()
	benchThroughGateway(b, cfg, session.Options{Audit: audit})
}

// BenchmarkLargeArgument is one auto-allowed call with a 100 KB argument
// (upstreamCounter's count_words): to the upstream itself, through the bare go-sdk proxy, and through airlock with its audit
// log on (the default: the arguments redacted, hashed and recorded in the call's
// decision and outcome records). The figures side by side are airlock's own cost
// for a large argument.
func BenchmarkLargeArgument(b *testing.B) {
	b.Run("direct", func(b *testing.B) { benchLargeCalls(b, dial(b, upstreamCounter(b)), "count_words") })
	b.Run("bare-proxy", func(b *testing.B) {
		benchLargeCalls(b, dialBareProxy(b, upstreamCounter(b), "counter", "count_words"), "counter__count_words")
	})
	b.Run("gateway-audited", func(b *testing.B) {
		audit, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		defer audit.Close()
		cfg := sessiontest.NewConfig(config.Server{Name: "counter", Transport: config.TransportHTTP, URL: upstreamCounter(b), Trust: trust.Trusted, ConnectTimeout: 10 * time.Second})
		benchGatewayWith(b, cfg, session.Options{Audit: audit},
			func(cs *mcp.ClientSession) { benchLargeCalls(b, cs, "counter__count_words") })
	})
}

// BenchmarkCallThroughGatewayNoHistory is BenchmarkCallThroughGateway without the
// protocol histories (the servers' and the agent sessions'): the difference is
// what keeping them costs a call.
func BenchmarkCallThroughGatewayNoHistory(b *testing.B) {
	benchThroughGateway(b, benchDocsConfig(b), session.Options{NoHistory: true})
}

// drainEvents reads m's events until the benchmark ends, as the TUI does: a call's
// CallFinished event holds its result until it is read.
func drainEvents(b *testing.B, m *session.Manager) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if _, ok := m.Next(ctx); !ok {
				return
			}
		}
	}()
	b.Cleanup(func() { cancel(); <-done })
}
