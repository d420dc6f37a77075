package gateway_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/trust"
)

// progressLog records every progress notification an agent hears, in order, and
// whether each came after the request it belongs to was answered.
type progressLog struct {
	mu       sync.Mutex
	got      []*mcp.ProgressNotificationParams
	answered map[any]bool // progress token -> its request returned
	late     []string
}

func (l *progressLog) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, req.Params)
	if l.answered[req.Params.ProgressToken] {
		l.late = append(l.late, req.Params.Message)
	}
}

func (l *progressLog) done(token any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.answered == nil {
		l.answered = map[any]bool{}
	}
	l.answered[token] = true
}

func (l *progressLog) of(token any) []*mcp.ProgressNotificationParams {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*mcp.ProgressNotificationParams
	for _, p := range l.got {
		if p.ProgressToken == token {
			out = append(out, p)
		}
	}
	return out
}

func (l *progressLog) lateOnes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.late...)
}

// TestGateway_WaitingProgressLastsTheWholeWait: while a call, a read or a prompt
// get waits for a person, an agent that sent a progress token hears about it every
// WaitingEvery for as long as it waits (so an agent whose timer progress resets does
// not give up), each notice's progress above the last, each saying what waits and
// for whom; once the question is answered or withdrawn, no notice follows.
func TestGateway_WaitingProgressLastsTheWholeWait(t *testing.T) {
	const every = 50 * time.Millisecond // as startGateway's, which startRelay uses
	const notices = 8                   // eight periods: the notices go on, not once
	type request struct {
		name string
		// run sends the request with a progress token and returns its error.
		run  func(ctx context.Context, cs *mcp.ClientSession, token string) error
		what string // what the message must name
	}
	relayMod := onBeta(func(s *config.Server) { s.Resources, s.Prompts = trust.Ask, trust.Ask })
	cases := []struct {
		request
		setup func(t *testing.T, log *progressLog) (*session.Manager, *mcp.ClientSession)
	}{
		{
			request: request{name: "tools/call", what: "waiting for a person to approve notes__delete_note in airlock (",
				run: func(ctx context.Context, cs *mcp.ClientSession, token string) error {
					return sendWithProgress(ctx, cs.CallTool, &mcp.CallToolParams{Name: "notes__delete_note", Arguments: map[string]any{"id": "note-1"}}, token)
				}},
			setup: func(t *testing.T, log *progressLog) (*session.Manager, *mcp.ClientSession) {
				m, _ := sessiontest.DemoInProcess(t, session.Options{}, func(c *config.Config) { c.ApprovalTimeout = time.Hour })
				g := startGatewayWith(t, m, gateway.Options{WaitingEvery: every})
				return m, agent(t, g, &mcp.ClientOptions{ProgressNotificationHandler: log.handler})
			},
		},
		{
			request: request{name: "resources/read", what: `waiting for a person to approve reading "test://same/readme" of beta in airlock (`,
				run: func(ctx context.Context, cs *mcp.ClientSession, token string) error {
					return sendWithProgress(ctx, cs.ReadResource, &mcp.ReadResourceParams{URI: gateway.RelayURI("beta", "test://same/readme")}, token)
				}},
			setup: func(t *testing.T, log *progressLog) (*session.Manager, *mcp.ClientSession) {
				f := startRelay(t, trust.Untrusted, func(c *config.Config) { relayMod(c); c.ApprovalTimeout = time.Hour })
				return f.m, agent(t, f.g, &mcp.ClientOptions{ProgressNotificationHandler: log.handler})
			},
		},
		{
			request: request{name: "prompts/get", what: "waiting for a person to approve getting prompt beta__summarise in airlock (",
				run: func(ctx context.Context, cs *mcp.ClientSession, token string) error {
					return sendWithProgress(ctx, cs.GetPrompt, &mcp.GetPromptParams{Name: "beta__summarise", Arguments: map[string]string{"topic": "x"}}, token)
				}},
			setup: func(t *testing.T, log *progressLog) (*session.Manager, *mcp.ClientSession) {
				f := startRelay(t, trust.Untrusted, func(c *config.Config) { relayMod(c); c.ApprovalTimeout = time.Hour })
				return f.m, agent(t, f.g, &mcp.ClientOptions{ProgressNotificationHandler: log.handler})
			},
		},
	}
	for _, tc := range cases {
		for _, end := range []string{"answered", "withdrawn"} {
			t.Run(tc.name+"/"+end, func(t *testing.T) {
				log := &progressLog{}
				m, cs := tc.setup(t, log)
				a := sessiontest.AnswerWith(t, m) // sees, never answers
				token := "tok-" + tc.name + "-" + end
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				errc := make(chan error, 1)
				go func() {
					err := tc.run(ctx, cs, token)
					log.done(token)
					errc <- err
				}()
				var p *model.Pending
				select {
				case p = <-a.Seen:
				case <-time.After(10 * time.Second):
					t.Fatal("no question was raised")
				}
				sessiontest.WaitFor(t, "the waiting notices to go on", 20*time.Second, func() bool { return len(log.of(token)) >= notices })

				if end == "answered" {
					if err := m.Engine().Answer(p.ID, model.Response{Answer: model.AllowOnce}); err != nil {
						t.Fatal(err)
					}
					if err := <-errc; err != nil {
						t.Fatalf("the approved request failed: %v", err)
					}
				} else {
					cancel()
					<-errc
					sessiontest.WaitFor(t, "the question to be withdrawn", 10*time.Second, func() bool { return len(m.Engine().Pending()) == 0 })
				}
				heard := len(log.of(token))
				// Long enough for several more notices, were any still sent.
				time.Sleep(6 * every)
				got := log.of(token)
				if len(got) != heard || len(log.lateOnes()) > 0 {
					t.Errorf("%d notices after the question was %s (%q)", len(got)-heard, end, log.lateOnes())
				}
				last := 0.0
				for i, n := range got {
					if n.Progress <= last {
						t.Errorf("notice %d: progress %v after %v, want it strictly increasing", i, n.Progress, last)
					}
					last = n.Progress
					if !strings.Contains(n.Message, tc.what) || !strings.Contains(n.Message, " left)") {
						t.Errorf("notice %d says %q, want it to name what waits (%q) and the time left", i, n.Message, tc.what)
					}
				}
			})
		}
	}
}

// TestGateway_WaitingProgressWhileTheServerAsksThePerson: a call already approved
// can wait for a person too, when its server asks the person a question
// (elicitation) before it answers. The agent that sent a progress token hears that
// every WaitingEvery, as it does while the call waits for approval, and nothing
// once the question is answered.
func TestGateway_WaitingProgressWhileTheServerAsksThePerson(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask_name", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil, nil
		})
	m := sessiontest.Start(t, sessiontest.NewConfig(sessiontest.InProcServer("asker", trust.Trusted, func(s *config.Server) { s.CallTimeout = time.Hour })),
		session.Options{InProcess: map[string]*mcp.Server{"asker": srv}})
	asked := make(chan *model.Elicitation, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	onEvents(ctx, m, func(ev model.Event) {
		if e, ok := ev.(model.ElicitationRequested); ok {
			asked <- e.Elicitation
		}
	})
	g := startGateway(t, m)
	log := &progressLog{}
	cs := agent(t, g, &mcp.ClientOptions{ProgressNotificationHandler: log.handler})
	const token = "tok-elicit"
	errc := make(chan error, 1)
	go func() {
		err := sendWithProgress(ctx, cs.CallTool, &mcp.CallToolParams{Name: "asker__ask_name", Arguments: map[string]any{}}, token)
		log.done(token)
		errc <- err
	}()
	var e *model.Elicitation
	select {
	case e = <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the server's question never reached the person")
	}
	sessiontest.WaitFor(t, "waiting notices while the server's question waits", 20*time.Second, func() bool { return len(log.of(token)) >= 8 })
	if err := m.AnswerElicitation(e.ID, "decline", nil); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("the call failed: %v", err)
	}
	heard := len(log.of(token))
	time.Sleep(300 * time.Millisecond) // six periods
	got := log.of(token)
	if len(got) != heard || len(log.lateOnes()) > 0 {
		t.Errorf("%d notices after the question was answered (%q)", len(got)-heard, log.lateOnes())
	}
	last := 0.0
	for i, n := range got {
		if n.Progress <= last {
			t.Errorf("notice %d: progress %v after %v", i, n.Progress, last)
		}
		last = n.Progress
		if n.Message != "waiting for a person to answer a question of asker in airlock (asked during asker__ask_name)" {
			t.Errorf("notice %d says %q", i, n.Message)
		}
	}
}
