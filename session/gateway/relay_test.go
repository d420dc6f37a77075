package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/trust"
)

// hostileURIs are resource URIs a server may list: they must be relayed and read
// back exactly (invalid UTF-8 becomes U+FFFD on the JSON wire before airlock sees it).
var hostileURIs = []string{
	"test://same/my notes#part?x=%zz",
	"x:\x1b[2J\x1b]0;title\x07\r\n\x00",
	"x:\xff\xfe",
	"x:" + strings.Repeat("%", 100_000),
	"x:\u202eevil\u202c/é",
}

// relayServer is an in-process server with resources, a template, a prompt with
// completions, subscriptions and a tool returning resource links. Two of them
// collide on every URI and name and say which one they are in every text they
// return. Reads are answered for any URI (a link need not be listed), echoing it.
type relayServer struct {
	name string
	srv  *mcp.Server
	mu   sync.Mutex
	subs map[string]int // URI -> subscribe requests on the current connections, 0 after an unsubscribe
}

func newRelayServer(name string) *relayServer {
	rs := &relayServer{name: name, subs: map[string]int{}}
	rs.srv = mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			what := req.Params.Ref.Name + req.Params.Ref.URI
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{name + ":" + what + ":" + req.Params.Argument.Value}}}, nil
		},
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			rs.mu.Lock()
			rs.subs[req.Params.URI]++
			rs.mu.Unlock()
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			rs.mu.Lock()
			delete(rs.subs, req.Params.URI)
			rs.mu.Unlock()
			return nil
		},
	})
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: name + " read " + req.Params.URI}}}, nil
	}
	rs.srv.AddResource(&mcp.Resource{URI: "test://same/readme", Name: "readme", MIMEType: "text/plain"}, read)
	rs.srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://same/item/{id}", Name: "item"}, read)
	rs.srv.AddPrompt(&mcp.Prompt{Name: "summarise", Arguments: []*mcp.PromptArgument{{Name: "topic", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: name + " summarise " + req.Params.Arguments["topic"]}},
				{Role: "user", Content: &mcp.ResourceLink{URI: "test://same/readme", Name: "readme"}},
			}}, nil
		})
	rs.srv.AddPrompt(&mcp.Prompt{Name: "bad name\x1b[2J"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{}}, nil
	})
	rs.srv.AddTool(&mcp.Tool{Name: "find", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: sessiontest.Hint(false)}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: name + " found one"},
				&mcp.ResourceLink{URI: "test://same/item/42", Name: "item 42"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://same/my notes", Text: name + " notes"}},
			}}, nil
		})
	// Any URI is read (a go-sdk server would answer "not found" for one it does not
	// list), and the listing carries the hostile URIs no go-sdk server can register.
	rs.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.ReadResourceRequest); ok {
				return read(ctx, r)
			}
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListResourcesResult); ok && err == nil {
				for _, u := range hostileURIs {
					lr.Resources = append(lr.Resources, &mcp.Resource{URI: u, Name: "hostile"})
				}
			}
			return res, err
		}
	})
	return rs
}

// onTheWire is s as it arrives through JSON: each invalid UTF-8 byte becomes U+FFFD.
func onTheWire(s string) string {
	b, _ := json.Marshal(s)
	var out string
	_ = json.Unmarshal(b, &out)
	return out
}

func (rs *relayServer) subscribed(uri string) int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.subs[uri]
}

type relayFixture struct {
	m      *session.Manager
	g      *gateway.Gateway
	cs     *mcp.ClientSession
	ups    map[string]*relayServer
	events *agentEvents
}

// agentEvents records what an agent is told.
type agentEvents struct {
	mu                               sync.Mutex
	updated                          []string
	resourcesChanged, promptsChanged int
}

func (e *agentEvents) snapshot() ([]string, int, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.updated...), e.resourcesChanged, e.promptsChanged
}

// startRelay runs alpha and beta (relayServer), and a trusted mail server with an
// open-world send tool that policy allows, behind a gateway with one agent.
func startRelay(t *testing.T, betaTrust trust.ServerTrust, mod func(*config.Config), opts ...func(*session.Options)) *relayFixture {
	t.Helper()
	f := &relayFixture{ups: map[string]*relayServer{"alpha": newRelayServer("alpha"), "beta": newRelayServer("beta")}, events: &agentEvents{}}
	cfg := sessiontest.NewConfig(sessiontest.InProcServer("alpha", trust.Trusted, nil), sessiontest.InProcServer("beta", betaTrust, nil),
		sessiontest.InProcServer("mail", trust.Trusted, func(s *config.Server) { s.Tools = map[string]config.Tool{"send": {Policy: trust.Allow}} }))
	if mod != nil {
		mod(cfg)
	}
	o := session.Options{MemoryTaint: true, InProcess: map[string]*mcp.Server{
		"alpha": f.ups["alpha"].srv, "beta": f.ups["beta"].srv, "mail": sessiontest.SendServer()}}
	for _, f := range opts {
		f(&o)
	}
	f.m = sessiontest.Start(t, cfg, o)
	f.g = startGateway(t, f.m)
	ev := f.events
	f.cs = agent(t, f.g, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			ev.mu.Lock()
			ev.updated = append(ev.updated, req.Params.URI)
			ev.mu.Unlock()
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			ev.mu.Lock()
			ev.resourcesChanged++
			ev.mu.Unlock()
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			ev.mu.Lock()
			ev.promptsChanged++
			ev.mu.Unlock()
		},
	})
	return f
}

func (f *relayFixture) read(t *testing.T, uri string) *mcp.ReadResourceResult {
	t.Helper()
	res, err := f.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("reading %.200q: %v", uri, err)
	}
	return res
}

// An agent lists the resources, templates and prompts of two servers
// whose URIs and names collide, reads each correctly (hostile URIs too), gets each
// prompt, completes, and follows a resource link from a tool result.
func TestRelay_CollidingServersListReadGetComplete(t *testing.T) {
	f := startRelay(t, trust.Trusted, nil)
	ctx := context.Background()
	init := f.cs.InitializeResult()
	if c := init.Capabilities; c.Resources == nil || !c.Resources.Subscribe || !c.Resources.ListChanged || c.Prompts == nil || c.Completions == nil {
		t.Fatalf("gateway capabilities %+v", c)
	}

	listed := map[string]*mcp.Resource{}
	for r, err := range f.cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed[r.URI] = r
	}
	for _, server := range []string{"alpha", "beta"} {
		for _, uri := range append([]string{"test://same/readme"}, hostileURIs...) {
			uri = onTheWire(uri)
			ru := gateway.RelayURI(server, uri)
			if listed[ru] == nil {
				t.Errorf("%s's %.80q is not listed as %.120q", server, uri, ru)
				continue
			}
			res := f.read(t, ru)
			if len(res.Contents) != 1 || res.Contents[0].Text != server+" read "+uri || res.Contents[0].URI != ru {
				t.Errorf("reading %.120q: %.200v", ru, res.Contents)
			}
		}
	}
	if want := 2 * (1 + len(hostileURIs)); len(listed) != want {
		t.Errorf("gateway lists %d resources, want %d", len(listed), want)
	}

	templates := map[string]bool{}
	for rt, err := range f.cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates[rt.URITemplate] = true
	}
	for _, server := range []string{"alpha", "beta"} {
		tmpl := "airlock://" + server + "/test://same/item/{id}"
		if !templates[tmpl] {
			t.Fatalf("template %q not listed (have %v)", tmpl, templates)
		}
		vals := uritemplate.Values{"id": uritemplate.String("4 2/é?#")}
		expanded, err := uritemplate.MustNew(tmpl).Expand(vals)
		if err != nil {
			t.Fatal(err)
		}
		upstream, _ := uritemplate.MustNew("test://same/item/{id}").Expand(vals)
		if res := f.read(t, expanded); res.Contents[0].Text != server+" read "+upstream {
			t.Errorf("reading the expansion %q: %q, want the server's own expansion %q", expanded, res.Contents[0].Text, upstream)
		}
		c, err := f.cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: tmpl}, Argument: mcp.CompleteParamsArgument{Name: "id", Value: "4"}})
		if err != nil || len(c.Completion.Values) != 1 || c.Completion.Values[0] != server+":test://same/item/{id}:4" {
			t.Errorf("completing %s's template: %+v %v", server, c, err)
		}
	}

	prompts := map[string]*mcp.Prompt{}
	for p, err := range f.cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		prompts[p.Name] = p
	}
	if len(prompts) != 2 {
		t.Errorf("prompts %v, want alpha__summarise and beta__summarise", prompts)
	}
	// A prompt name that is no valid MCP name is not served, and said so, escaped.
	skipped := strings.Join(f.g.Skipped(), "\n")
	if !strings.Contains(skipped, `alpha prompt "bad name\x1b[2J": name cannot be served`) {
		t.Errorf("skipped = %q", skipped)
	}
	for _, server := range []string{"alpha", "beta"} {
		name := server + "__summarise"
		if p := prompts[name]; p == nil || len(p.Arguments) != 1 || p.Arguments[0].Name != "topic" || !p.Arguments[0].Required {
			t.Fatalf("prompt %s listed as %+v", name, p)
		}
		res, err := f.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: map[string]string{"topic": "x"}})
		if err != nil || len(res.Messages) != 2 {
			t.Fatalf("getting %s: %+v %v", name, res, err)
		}
		if tc, _ := res.Messages[0].Content.(*mcp.TextContent); tc == nil || tc.Text != server+" summarise x" {
			t.Errorf("%s message %+v", name, res.Messages[0].Content)
		}
		if link, _ := res.Messages[1].Content.(*mcp.ResourceLink); link == nil || link.URI != "airlock://"+server+"/test://same/readme" {
			t.Errorf("%s link %+v", name, res.Messages[1].Content)
		}
		c, err := f.cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: name}, Argument: mcp.CompleteParamsArgument{Name: "topic", Value: "t"}})
		if err != nil || len(c.Completion.Values) != 1 || c.Completion.Values[0] != server+":summarise:t" {
			t.Errorf("completing %s: %+v %v", name, c, err)
		}

		// A tool result's resource link is followed through the gateway, though no
		// listing holds it.
		out, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: server + "__find", Arguments: map[string]any{}})
		if err != nil || out.IsError {
			t.Fatalf("%s__find: %v %s", server, err, resultText(out))
		}
		link, _ := out.Content[1].(*mcp.ResourceLink)
		emb, _ := out.Content[2].(*mcp.EmbeddedResource)
		if link == nil || link.URI != "airlock://"+server+"/test://same/item/42" || emb == nil || emb.Resource.URI != "airlock://"+server+"?test://same/my%20notes" {
			t.Fatalf("%s__find content %+v %+v", server, out.Content[1], out.Content[2])
		}
		if res := f.read(t, link.URI); res.Contents[0].Text != server+" read test://same/item/42" {
			t.Errorf("following %s's link: %q", server, res.Contents[0].Text)
		}
		if res := f.read(t, emb.Resource.URI); res.Contents[0].Text != server+" read test://same/my notes" {
			t.Errorf("reading %s's embedded resource again: %q", server, res.Contents[0].Text)
		}
	}

	// A URI that is not a relay URI, or names a server airlock does not have, is
	// refused; an unknown prompt too.
	for _, bad := range []string{"test://same/readme", "airlock://nosuch/test://same/readme", "airlock://alpha?%zz"} {
		if _, err := f.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: bad}); err == nil {
			t.Errorf("reading %q succeeded", bad)
		}
	}
	if _, err := f.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "alpha__nosuch"}); err == nil {
		t.Error("an unknown prompt was got")
	}
}

// A subscribed resource's resources/updated reaches the agent under
// its relay URI (and only that one: the other server's same URI is not confused with
// it); unsubscribing reaches the server.
func TestRelay_SubscribeForwardsUpdated(t *testing.T) {
	f := startRelay(t, trust.Trusted, nil)
	ctx := context.Background()
	alphaReadme := gateway.RelayURI("alpha", "test://same/readme")
	// An equivalent spelling (the host in capitals) is the same subscription.
	if err := f.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "airlock://ALPHA/test://same/readme"}); err != nil {
		t.Fatal(err)
	}
	if n := f.ups["alpha"].subscribed("test://same/readme"); n != 1 {
		t.Fatalf("alpha was asked to subscribe %d times", n)
	}
	if n := f.ups["beta"].subscribed("test://same/readme"); n != 0 {
		t.Fatalf("beta was asked to subscribe %d times", n)
	}
	_ = f.ups["beta"].srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://same/readme"})
	_ = f.ups["alpha"].srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://same/readme"})
	sessiontest.WaitFor(t, "resources/updated at the agent", 10*time.Second, func() bool {
		u, _, _ := f.events.snapshot()
		return len(u) > 0
	})
	time.Sleep(100 * time.Millisecond)
	if u, _, _ := f.events.snapshot(); len(u) != 1 || u[0] != alphaReadme {
		t.Errorf("agent was told %q, want exactly [%q]", u, alphaReadme)
	}

	// A second agent holds the same subscription: the first one's unsubscribe does
	// not end it at the server; the second one leaving does.
	cs2 := agent(t, f.g, nil)
	if err := cs2.Subscribe(ctx, &mcp.SubscribeParams{URI: alphaReadme}); err != nil {
		t.Fatal(err)
	}
	if err := f.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: alphaReadme}); err != nil {
		t.Fatal(err)
	}
	if n := f.ups["alpha"].subscribed("test://same/readme"); n == 0 {
		t.Error("one agent's unsubscribe ended another agent's subscription at the server")
	}
	cs2.Close()
	sessiontest.WaitFor(t, "the server to be unsubscribed when the last agent left", 10*time.Second, func() bool {
		return f.ups["alpha"].subscribed("test://same/readme") == 0
	})
}

// A server that reconnects has forgotten its subscriptions: the gateway asks again
// for the URIs agents hold, so resources/updated keeps coming.
func TestRelay_SubscriptionSurvivesReconnect(t *testing.T) {
	f := startRelay(t, trust.Trusted, nil)
	ctx := context.Background()
	alphaReadme := gateway.RelayURI("alpha", "test://same/readme")
	if err := f.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: alphaReadme}); err != nil {
		t.Fatal(err)
	}
	gen := sessiontest.MustServer(t, f.m, "alpha", model.StatusReady).Gen
	if err := f.m.Reconnect("alpha"); err != nil {
		t.Fatal(err)
	}
	sessiontest.WaitFor(t, "alpha to reconnect and be subscribed again", 10*time.Second, func() bool {
		sv, _ := f.m.Snapshot().Server("alpha")
		return sv.Gen != gen && sv.Status == model.StatusReady && f.ups["alpha"].subscribed("test://same/readme") >= 2
	})
	// The server counts the subscribe before airlock has its answer: until then an
	// update is dropped (it is for no URI anyone holds), so it is sent again until
	// one arrives.
	sessiontest.WaitFor(t, "resources/updated after the reconnect", 10*time.Second, func() bool {
		_ = f.ups["alpha"].srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://same/readme"})
		u, _, _ := f.events.snapshot()
		return len(u) >= 1 && u[0] == alphaReadme
	})
}

// The agent is asked about (and the person answers) an untrusted
// server's resource read; its content taints the agent's context, and an
// exfiltration call that policy allows then asks, naming the resource.
func TestRelay_UntrustedReadAsksTaintsThenExfiltrationAsks(t *testing.T) {
	f := startRelay(t, trust.Untrusted, betaResourcesAsk)
	a := sessiontest.AnswerWith(t, f.m, model.Response{Answer: model.AllowOnce}, model.Response{Answer: model.Deny, Reason: "no"},
		model.Response{Answer: model.Deny, Reason: "not that one"})
	ctx := context.Background()
	// A trusted server's read neither asks nor taints.
	f.read(t, gateway.RelayURI("alpha", "test://same/readme"))
	sessiontest.NoAsk(t, a)
	res := f.read(t, gateway.RelayURI("beta", "test://same/readme"))
	if res.Contents[0].Text != "beta read test://same/readme" {
		t.Fatalf("read %q", res.Contents[0].Text)
	}
	p := <-a.Seen
	if p.Request.Server != "beta" || p.Request.Tool != trust.ResourceReadTool || !strings.Contains(string(p.Request.Args), "test://same/readme") || p.Request.Client != "test-agent" {
		t.Errorf("the question was about %s %s %s from %q", p.Request.Server, p.Request.Tool, p.Request.Args, p.Request.Client)
	}
	taint := f.m.Engine().Taint(p.Request.Context)
	if !taint.Tainted() || !strings.Contains(taint.Reason(), `resource "test://same/readme" of server beta`) {
		t.Fatalf("agent context taint after the read: %q", taint.Reason())
	}
	out, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mail__send", Arguments: map[string]any{}})
	if err != nil || !out.IsError || !strings.Contains(resultText(out), "denied") {
		t.Fatalf("send after the tainting read: %v %q", err, resultText(out))
	}
	q := <-a.Seen
	if q.Request.Tool != "send" || !strings.Contains(q.Taint.Reason(), "test://same/readme") {
		t.Errorf("the exfiltration question is about %s, taint %q", q.Request.Tool, q.Taint.Reason())
	}
	// A read the person denies reaches the agent as an error that says so.
	_, err = f.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: gateway.RelayURI("beta", "x:secret")})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || !strings.Contains(werr.Message, "airlock denied this read") || !strings.Contains(werr.Message, "not that one") {
		t.Errorf("denied read: %v", err)
	}
	<-a.Seen
}

// list_changed of an upstream's resources and prompts reaches the
// agent, and the new entries are served.
func TestRelay_ListChangedForwarded(t *testing.T) {
	f := startRelay(t, trust.Trusted, nil)
	ctx := context.Background()
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "new"}}}, nil
	}
	f.ups["beta"].srv.AddResource(&mcp.Resource{URI: "test://same/new", Name: "new"}, read)
	f.ups["beta"].srv.AddPrompt(&mcp.Prompt{Name: "fresh"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "fresh"}}}}, nil
	})
	sessiontest.WaitFor(t, "resources and prompts list_changed at the agent", 10*time.Second, func() bool {
		_, r, p := f.events.snapshot()
		return r > 0 && p > 0
	})
	sessiontest.WaitFor(t, "beta's new resource and prompt to be served", 10*time.Second, func() bool {
		rl, err := f.cs.ListResources(ctx, nil)
		if err != nil {
			return false
		}
		pl, err := f.cs.ListPrompts(ctx, nil)
		if err != nil {
			return false
		}
		hasR, hasP := false, false
		for _, r := range rl.Resources {
			hasR = hasR || r.URI == "airlock://beta/test://same/new"
		}
		for _, p := range pl.Prompts {
			hasP = hasP || p.Name == "beta__fresh"
		}
		return hasR && hasP
	})
	if res := f.read(t, "airlock://beta/test://same/new"); res.Contents[0].Text != "beta read test://same/new" {
		t.Errorf("new resource reads %q", res.Contents[0].Text)
	}
}

// A blocked server and a server whose resources are denied are not relayed; a
// Denied server's prompts still are.
func TestRelay_BlockedAndDeniedNotServed(t *testing.T) {
	f := startRelay(t, trust.BlockedServer, func(c *config.Config) {
		for i := range c.Servers {
			if c.Servers[i].Name == "alpha" {
				c.Servers[i].Resources = trust.Deny
			}
		}
	})
	ctx := context.Background()
	rl, err := f.cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rl.Resources) != 0 {
		t.Errorf("resources served: %d, first %q", len(rl.Resources), rl.Resources[0].URI)
	}
	pl, err := f.cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Prompts) != 1 || pl.Prompts[0].Name != "alpha__summarise" {
		t.Errorf("prompts served: %+v", pl.Prompts)
	}
	// Reading anyway goes to the Manager, which refuses it.
	for _, u := range []string{"airlock://beta/test://same/readme", "airlock://alpha/test://same/readme"} {
		if _, err := f.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: u}); err == nil {
			t.Errorf("reading %s succeeded", u)
		}
	}
}

// Every read and get an agent makes through the gateway is audited with the server's
// own URI or name, and one the gateway cannot map (not a relay URI, an unknown
// prompt) is audited as refused.
func TestRelay_AgentReadsAndRefusalsAudited(t *testing.T) {
	audit, logPath := sessiontest.OpenAuditLog(t)
	f := startRelay(t, trust.Trusted, nil, func(o *session.Options) { o.Audit = audit })
	ctx := context.Background()
	f.read(t, gateway.RelayURI("beta", "test://same/readme"))
	if _, err := f.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "alpha__summarise", Arguments: map[string]string{"topic": "q"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///etc/passwd"}); err == nil {
		t.Fatal("a URI that is not a relay URI was read")
	}
	if _, err := f.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "nosuch__prompt"}); err == nil {
		t.Fatal("an unknown prompt was got")
	}
	var read, got, refusedRead, refusedPrompt bool
	for _, r := range sessiontest.AuditRecords(t, logPath) {
		if r.Context != gateway.AgentContext(gateway.DefaultTokenName) || r.Client != "test-agent" {
			continue
		}
		switch {
		case r.Kind == "decision" && r.Server == "beta" && r.Tool == trust.ResourceReadTool && r.Decision == "allow":
			read = strings.Contains(string(r.Args), `"test://same/readme"`)
		case r.Kind == "decision" && r.Server == "alpha" && r.Tool == trust.PromptGetTool && r.Decision == "allow":
			got = strings.Contains(string(r.Args), `"summarise"`)
		case r.Tool == trust.ResourceReadTool && r.Decision == "deny" && r.DecidedBy == string(trust.DecidedByUnknownTool):
			refusedRead = strings.Contains(r.Reason, "file:///etc/passwd")
		case r.Tool == trust.PromptGetTool && r.Decision == "deny" && r.DecidedBy == string(trust.DecidedByUnknownTool):
			refusedPrompt = strings.Contains(r.Reason, "nosuch__prompt")
		}
	}
	if !read || !got || !refusedRead || !refusedPrompt {
		t.Errorf("audited: read %v, prompt %v, refused read %v, refused prompt %v", read, got, refusedRead, refusedPrompt)
	}
}

// Against the pinned server-everything: an agent through the gateway
// lists its resources, templates and prompts, reads a listed resource and a template
// expansion, follows the resource links a tool returns, completes and gets a prompt,
// and receives resources/updated for a subscribed resource. The server is labelled
// untrusted-content, so the agent's context ends tainted.
func TestRelay_NPMEverythingThroughGateway(t *testing.T) {
	ev := sessiontest.NPMServer(t, "everything", "mcp-server-everything", trust.Trusted)
	ev.Labels = []trust.Leg{trust.LegUntrustedContent}
	ev.Tools = map[string]config.Tool{"toggle-subscriber-updates": {Policy: trust.Allow}}
	m := sessiontest.Start(t, sessiontest.NewConfig(ev), session.Options{MemoryTaint: true})
	g := startGateway(t, m)
	var updates collected
	cs := agent(t, g, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updates.add(req.Params.URI)
	}})
	ctx := context.Background()
	readText := func(uri string) string {
		t.Helper()
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) == 0 {
			t.Fatalf("reading %s: %+v %v", uri, res, err)
		}
		if res.Contents[0].URI != uri {
			t.Errorf("reading %s: content URI %q", uri, res.Contents[0].URI)
		}
		return res.Contents[0].Text + string(res.Contents[0].Blob)
	}

	rl, err := cs.ListResources(ctx, nil)
	if err != nil || len(rl.Resources) == 0 {
		t.Fatalf("resources: %+v %v", rl, err)
	}
	for _, r := range rl.Resources {
		if !strings.HasPrefix(r.URI, "airlock://everything/") {
			t.Errorf("resource URI %q is not a relay URI of everything", r.URI)
		}
	}
	if readText(rl.Resources[0].URI) == "" {
		t.Errorf("%s reads empty", rl.Resources[0].URI)
	}
	tl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tl.ResourceTemplates) == 0 {
		t.Fatalf("templates: %+v %v", tl, err)
	}
	tmpl := uritemplate.MustNew(tl.ResourceTemplates[0].URITemplate)
	vals := uritemplate.Values{}
	for _, n := range tmpl.Varnames() {
		vals.Set(n, uritemplate.String("1"))
	}
	expanded, _ := tmpl.Expand(vals)
	if readText(expanded) == "" {
		t.Errorf("the expansion %s reads empty", expanded)
	}

	out, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__get-resource-links", Arguments: map[string]any{"count": 2}})
	if err != nil || out.IsError {
		t.Fatalf("get-resource-links: %v %s", err, resultText(out))
	}
	links := 0
	for _, c := range out.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			links++
			if !strings.HasPrefix(l.URI, "airlock://everything/") || readText(l.URI) == "" {
				t.Errorf("link %q cannot be followed", l.URI)
			}
		}
	}
	if links != 2 {
		t.Errorf("%d links, want 2", links)
	}

	c, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "everything__completable-prompt"},
		Argument: mcp.CompleteParamsArgument{Name: "department", Value: "E"}})
	if err != nil || len(c.Completion.Values) != 1 || c.Completion.Values[0] != "Engineering" {
		t.Errorf("completion: %+v %v", c, err)
	}
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "everything__completable-prompt", Arguments: map[string]string{"department": "Sales", "name": "Eve"}})
	if err != nil || len(pr.Messages) == 0 {
		t.Fatalf("prompt: %+v %v", pr, err)
	}
	if txt, _ := pr.Messages[0].Content.(*mcp.TextContent); txt == nil || !strings.Contains(txt.Text, "Eve") {
		t.Errorf("prompt message %+v", pr.Messages[0].Content)
	}

	sub := gateway.RelayURI("everything", "demo://resource/dynamic/text/1")
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: sub}); err != nil {
		t.Fatal(err)
	}
	if out, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__toggle-subscriber-updates", Arguments: map[string]any{}}); err != nil || out.IsError {
		t.Fatalf("toggle-subscriber-updates: %v %s", err, resultText(out))
	}
	sessiontest.WaitFor(t, "resources/updated at the agent", 30*time.Second, func() bool {
		return len(updates.all()) > 0
	})
	if updated := updates.all(); updated[0] != sub {
		t.Errorf("updated %q, want %q", updated[0], sub)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: sub}); err != nil {
		t.Error(err)
	}
	if !m.Engine().Taint(gateway.AgentContext(gateway.DefaultTokenName)).Tainted() {
		t.Error("the agent's context is not tainted by an untrusted-content server's resources")
	}
}

// An agent session holds at most gateway.Options.MaxSubscriptions subscriptions; the
// next one is refused with a sentence, and resubscribing to one it holds still works.
func TestRelay_AgentSubscriptionsBounded(t *testing.T) {
	f := startRelay(t, trust.Trusted, nil)
	const most = 5
	g, err := gateway.New(f.m, gateway.Options{Listen: "127.0.0.1:0", Token: testToken, MaxSubscriptions: most})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	cs := agent(t, g, nil)
	ctx := context.Background()
	uri := func(i int) string { return gateway.RelayURI("alpha", "test://same/item/"+strconv.Itoa(i)) }
	for i := range most {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri(i)}); err != nil {
			t.Fatalf("subscription %d: %v", i, err)
		}
	}
	err = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri(most)})
	if err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("subscription over the bound: %v", err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri(0)}); err != nil {
		t.Errorf("subscribing again to a held URI: %v", err)
	}
}

// An agent that sent a progress token hears that its read waits for a person, and
// cancelling withdraws the question, as for a call.
func TestRelay_ReadWaitingIsToldAndCancelWithdraws(t *testing.T) {
	f := startRelay(t, trust.Untrusted, betaResourcesAsk)
	a := sessiontest.AnswerWith(t, f.m) // sees, never answers
	var told atomic.Int32
	cs := agent(t, f.g, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		if strings.Contains(req.Params.Message, `waiting for a person to approve reading "test://same/readme" of beta`) {
			told.Add(1)
		}
	}})
	cancelWhileWaiting(t, a, "a waiting progress notification for the read", func() bool { return told.Load() > 0 }, func(ctx context.Context) error {
		return sendWithProgress(ctx, cs.ReadResource, &mcp.ReadResourceParams{URI: gateway.RelayURI("beta", "test://same/readme")}, "tok-read")
	})
	sessiontest.WaitFor(t, "the read's question to be withdrawn", 5*time.Second, func() bool { return len(f.m.Engine().Pending()) == 0 })
}

// The person's subscription in the TUI and the agents' subscriptions are separate
// holders of one upstream subscription: the last agent letting go must not end the
// person's, and the server is told to stop only when nobody holds the URI.
func TestRelay_AgentUnsubscribeKeepsThePersonsSubscription(t *testing.T) {
	f := startRelay(t, trust.Trusted, nil)
	ctx := context.Background()
	alphaReadme := gateway.RelayURI("alpha", "test://same/readme")
	if err := f.m.Subscribe(ctx, "alpha", "test://same/readme"); err != nil {
		t.Fatal(err)
	}
	if err := f.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: alphaReadme}); err != nil {
		t.Fatal(err)
	}
	if err := f.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: alphaReadme}); err != nil {
		t.Fatal(err)
	}
	if n := f.ups["alpha"].subscribed("test://same/readme"); n == 0 {
		t.Fatal("the agent's unsubscribe ended the person's subscription at the server")
	}
	_ = f.ups["alpha"].srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://same/readme"})
	sessiontest.WaitFor(t, "resources/updated for the person", 10*time.Second, func() bool {
		for {
			ectx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			ev, ok := f.m.Next(ectx)
			cancel()
			if !ok {
				return false
			}
			if u, ok := ev.(model.ResourceUpdated); ok && u.URI == "test://same/readme" {
				return true
			}
		}
	})
	if err := f.m.Unsubscribe(ctx, "alpha", "test://same/readme"); err != nil {
		t.Fatal(err)
	}
	if n := f.ups["alpha"].subscribed("test://same/readme"); n != 0 {
		t.Fatalf("nobody holds the URI, the server still counts %d subscriptions", n)
	}
}
