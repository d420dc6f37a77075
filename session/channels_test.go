package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/conn"
	"github.com/airlock-mcp/airlock/session/record"
	"github.com/airlock-mcp/airlock/trust"
)

func TestChannels_ListedAfterConnect(t *testing.T) {
	m := sessiontest.ChannelManager(t, session.Options{}, map[string]*mcp.Server{"notes": sessiontest.ChannelServer(nil)}, sessiontest.InProcServer("notes", trust.Trusted, nil))
	sv := sessiontest.MustServer(t, m, "notes", model.StatusReady)
	if len(sv.Resources) != 1 || sv.Resources[0].URI != "notes://inbox" || sv.Resources[0].MIMEType != "text/plain" {
		t.Errorf("resources = %+v", sv.Resources)
	}
	if len(sv.ResourceTemplates) != 1 || sv.ResourceTemplates[0].URITemplate != "notes://note/{id}" {
		t.Errorf("templates = %+v", sv.ResourceTemplates)
	}
	if len(sv.Prompts) != 1 || sv.Prompts[0].Name != "summarise" || len(sv.Prompts[0].Arguments) != 1 || !sv.Prompts[0].Arguments[0].Required {
		t.Errorf("prompts = %+v", sv.Prompts)
	}
	if !sv.OffersResources || !sv.OffersPrompts || !sv.Subscribe || !sv.Completions {
		t.Errorf("capabilities: resources %v prompts %v subscribe %v completions %v", sv.OffersResources, sv.OffersPrompts, sv.Subscribe, sv.Completions)
	}
}

// An untrusted server's resource taints the context, the taint names the resource,
// and a following call to an exfiltration tool (policy allow) asks.
func TestChannels_UntrustedResourceReadTaintsAndExfiltrationAsks(t *testing.T) {
	m := sessiontest.ChannelManager(t, session.Options{}, map[string]*mcp.Server{"notes": sessiontest.ChannelServer(nil), "mail": sessiontest.SendServer()},
		sessiontest.InProcServer("notes", trust.Untrusted, nil), sessiontest.InProcServer("mail", trust.Trusted, func(s *config.Server) {
			s.Tools = map[string]config.Tool{"send": {Policy: trust.Allow}}
		}))
	ctx := context.Background()
	out, err := m.ReadResource(ctx, model.ReadRequest{Context: "agent-1", Server: "notes", URI: "notes://inbox"})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Tainted || len(out.Result.Contents) != 1 || !strings.Contains(out.Result.Contents[0].Text, "ignore previous") {
		t.Fatalf("outcome = %+v", out)
	}
	taint := m.Engine().Taint("agent-1")
	if !taint.Tainted() || !strings.Contains(taint.Reason(), `resource "notes://inbox" of server notes`) {
		t.Fatalf("taint = %+v (%s)", taint, taint.Reason())
	}
	a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.Deny})
	_, err = m.Call(ctx, model.CallRequest{Context: "agent-1", Server: "mail", Tool: "send", Args: sessiontest.Args(`{}`)})
	var denied *model.DeniedError
	if !errors.As(err, &denied) || denied.Verdict.By != trust.DecidedByTaintThenPerson {
		t.Fatalf("send after a tainting read: err %v, want a question the person denied", err)
	}
	p := <-a.Seen
	if !strings.Contains(p.Taint.Reason(), "notes://inbox") {
		t.Errorf("the question's taint does not name the resource: %s", p.Taint.Reason())
	}
	// Another context is untouched.
	if _, err := m.Call(ctx, model.CallRequest{Context: "agent-2", Server: "mail", Tool: "send", Args: sessiontest.Args(`{}`)}); err != nil {
		t.Errorf("a clean context's send: %v", err)
	}
}

// Policy per server: deny refuses before anything is sent, ask asks (the question is
// about resources/read with the URI as its arguments), allow runs; every read is
// audited with its URI's hash and decided_by.
func TestChannels_PolicyAndAudit(t *testing.T) {
	logPath := t.TempDir() + "/audit.jsonl"
	audit, err := audit.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { audit.Close() })
	m := sessiontest.ChannelManager(t, session.Options{Audit: audit}, map[string]*mcp.Server{"a": sessiontest.ChannelServer(nil), "b": sessiontest.ChannelServer(nil), "c": sessiontest.ChannelServer(nil)},
		sessiontest.InProcServer("a", trust.Trusted, func(s *config.Server) { s.Resources, s.Prompts = trust.Deny, trust.Deny }),
		sessiontest.InProcServer("b", trust.Trusted, func(s *config.Server) { s.Resources, s.Prompts = trust.Ask, trust.Ask }),
		sessiontest.InProcServer("c", trust.Trusted, func(s *config.Server) { s.Resources = trust.Allow }))
	ctx := context.Background()
	var denied *model.DeniedError
	if _, err := m.ReadResource(ctx, model.ReadRequest{Server: "a", URI: "notes://inbox"}); !errors.As(err, &denied) || denied.Verdict.By != trust.DecidedByPolicy {
		t.Errorf("read with resources = deny: %v", err)
	}
	if _, err := m.GetPrompt(ctx, model.PromptRequest{Server: "a", Name: "summarise"}); !errors.As(err, &denied) {
		t.Errorf("get with prompts = deny: %v", err)
	}
	if _, err := m.Complete(ctx, model.CompleteRequest{Server: "a", Prompt: "summarise", Argument: "topic", Value: "x"}); !errors.As(err, &denied) {
		t.Errorf("completion with prompts = deny: %v", err)
	}
	a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.AllowOnce}, model.Response{Answer: model.Deny})
	out, err := m.ReadResource(ctx, model.ReadRequest{Server: "b", URI: "notes://note/7"})
	if err != nil || out.Verdict.By != trust.DecidedByPerson || out.Result.Contents[0].Text != "note notes://note/7" {
		t.Fatalf("read with resources = ask, allowed once: %+v, %v", out, err)
	}
	p := <-a.Seen
	if p.Tool.Channel != trust.KindResources || p.Request.Tool != trust.ResourceReadTool || string(p.Request.Args) != `{"uri":"notes://note/7"}` {
		t.Errorf("question: channel %q tool %q args %s", p.Tool.Channel, p.Request.Tool, p.Request.Args)
	}
	if _, err := m.GetPrompt(ctx, model.PromptRequest{Server: "b", Name: "summarise", Args: sessiontest.Args(`{"topic": "x"}`)}); !errors.As(err, &denied) || denied.Verdict.By != trust.DecidedByPerson {
		t.Errorf("get with prompts = ask, denied: %v", err)
	}
	p = <-a.Seen
	if string(p.Request.Args) != `{"arguments":{"topic":"x"},"name":"summarise"}` {
		t.Errorf("prompt question args %s", p.Request.Args)
	}
	out, err = m.ReadResource(ctx, model.ReadRequest{Server: "c", URI: "notes://inbox"})
	if err != nil || out.Verdict.By != trust.DecidedByPolicy || out.Tainted {
		t.Fatalf("read with resources = allow from a trusted server: %+v, %v", out, err)
	}
	pr, err := m.GetPrompt(ctx, model.PromptRequest{Server: "c", Name: "summarise", Args: sessiontest.Args(`{"topic":"tides"}`)})
	if err != nil || pr.Result.Messages[0].Content.(*mcp.TextContent).Text != "summarise tides" {
		t.Fatalf("get from c: %+v, %v", pr, err)
	}
	if _, err := m.GetPrompt(ctx, model.PromptRequest{Server: "c", Name: "summarise", Args: sessiontest.Args(`{"topic":1}`)}); err == nil || !strings.Contains(err.Error(), "object of strings") {
		t.Errorf("non-string prompt argument: %v", err)
	}
	var reads []string
	for _, r := range sessiontest.AuditRecords(t, logPath) {
		if r.Tool == trust.ResourceReadTool {
			reads = append(reads, r.Server+" "+r.Kind+" "+r.Decision+" "+r.DecidedBy+" "+r.Outcome)
			if r.Kind == "decision" && r.Server == "b" && r.ArgsSHA256 != trust.ArgsSHA256([]byte(`{"uri":"notes://note/7"}`)) {
				t.Errorf("audit hash %s is not of the shown URI", r.ArgsSHA256)
			}
		}
	}
	want := []string{"a decision deny policy ", "b decision allow person ", "b outcome   ok", "c decision allow policy ", "c outcome   ok"}
	if strings.Join(reads, "|") != strings.Join(want, "|") {
		t.Errorf("audit of reads:\n got %q\nwant %q", reads, want)
	}
}

// A private-data server's resources fill the private-data leg of the hazards, an
// untrusted server's resources the untrusted-content leg: with an exfiltration tool
// that is a lethal trifecta made of channels.
func TestChannels_PrivateDataResourcesMakeAHazardLeg(t *testing.T) {
	m := sessiontest.ChannelManager(t, session.Options{}, map[string]*mcp.Server{"notes": sessiontest.ChannelServer(nil), "web": sessiontest.ChannelServer(nil), "mail": sessiontest.SendServer()},
		sessiontest.InProcServer("notes", trust.Trusted, func(s *config.Server) { s.Labels = []trust.Leg{trust.LegPrivateData} }),
		sessiontest.InProcServer("web", trust.Untrusted, nil),
		sessiontest.InProcServer("mail", trust.Trusted, nil))
	var found bool
	for _, h := range m.Snapshot().Hazards {
		if h.Kind == trust.HazardLethalTrifecta {
			found = true
			if !containsStr(h.Legs[string(trust.LegPrivateData)], "notes__resources/read") || !containsStr(h.Legs[string(trust.LegUntrustedContent)], "web__resources/read") {
				t.Errorf("trifecta legs = %v", h.Legs)
			}
		}
	}
	if !found {
		t.Fatalf("no lethal trifecta in %+v", m.Snapshot().Hazards)
	}
	for _, ti := range m.Snapshot().Tools {
		if ti.Channel != "" {
			t.Errorf("a channel is listed as a tool: %s", ti.Ref.Qualified())
		}
	}
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// A 20 MB resource is bounded: over a transport (in-process too) one message is at
// most MaxMessageBytes, so the read fails; a 10 MB one fits in a message and is
// refused by MaxContentBytes with its size and the limit. Neither hands anything on,
// and airlock's own refusal taints nothing.
func TestChannels_HugeResourceBounded(t *testing.T) {
	for _, size := range []int{20 << 20, 10 << 20} {
		t.Run(fmt.Sprint(size>>20, "MiB"), func(t *testing.T) {
			big := strings.Repeat("x", size)
			srv := sessiontest.ChannelServer(func(s *mcp.Server) {
				s.AddResource(&mcp.Resource{URI: "big://one", Name: "big"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: big}}}, nil
				})
			})
			// Copying 10 MiB under -race on a loaded machine takes seconds.
			m := sessiontest.ChannelManager(t, session.Options{}, map[string]*mcp.Server{"web": srv}, sessiontest.InProcServer("web", trust.Trusted, func(s *config.Server) { s.CallTimeout = 90 * time.Second }))
			out, err := m.ReadResource(context.Background(), model.ReadRequest{Context: "a", Server: "web", URI: "big://one"})
			if err == nil || out != nil {
				t.Fatalf("%d bytes read: %v", size, err)
			}
			if size < conn.MaxMessageBytes {
				if !strings.Contains(err.Error(), fmt.Sprintf("holds %d bytes; airlock hands on at most %d", size+len("big://one"), session.MaxContentBytes)) {
					t.Errorf("10 MiB: %v", err)
				}
				if m.Engine().Taint("a").Tainted() {
					t.Error("a refused resource tainted the context")
				}
			}
			sv, _ := m.Snapshot().Server("web")
			t.Logf("%d MiB: %v (server %s %v)", size>>20, err, sv.Status, sv.Err)
		})
	}
}

// Hostile listings: a server that pages forever with fresh cursors stops at the page
// cap; duplicates are dropped with a notice; hostile URIs, names and MIME types are
// kept as data, byte for byte.
func TestChannels_PagingCapsDuplicatesHostileNames(t *testing.T) {
	hostile := "notes://\x1b[2J\u202eevil\n"
	srv := mcp.NewServer(&mcp.Implementation{Name: "pager", Version: "1"}, nil)
	srv.AddResource(&mcp.Resource{URI: "ok://x", Name: "ok"}, nil) // declares the capability
	srv.AddPrompt(&mcp.Prompt{Name: "p"}, nil)
	n := 0
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "resources/list":
				n++
				return &mcp.ListResourcesResult{Resources: []*mcp.Resource{{URI: hostile, Name: "\x1b]8;;http://x\x07name", MIMEType: "text/\x1b[31mred"}, {URI: "dup://x", Name: "a"}, {URI: "dup://x", Name: "b"}}, NextCursor: fmt.Sprint("c", n)}, nil
			case "prompts/list":
				return &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{{Name: "same"}, {Name: "same"}}, NextCursor: "loop"}, nil
			}
			return next(ctx, method, req)
		}
	})
	m := sessiontest.ChannelManager(t, session.Options{}, map[string]*mcp.Server{"pager": srv}, sessiontest.InProcServer("pager", trust.Untrusted, nil))
	sv := sessiontest.MustServer(t, m, "pager", model.StatusReady)
	if n != conn.MaxCatalogPages {
		t.Errorf("resources/list was asked %d times, want the cap %d", n, conn.MaxCatalogPages)
	}
	if len(sv.Resources) != 2 || sv.Resources[0].URI != hostile || sv.Resources[0].Name != "\x1b]8;;http://x\x07name" || sv.Resources[0].MIMEType != "text/\x1b[31mred" {
		t.Errorf("resources = %+v", sv.Resources)
	}
	if len(sv.Prompts) != 1 {
		t.Errorf("prompts = %+v", sv.Prompts)
	}
	notices := strings.Join(sv.Notices, "\n")
	for _, want := range []string{
		fmt.Sprintf("resources/list stopped after %d pages", conn.MaxCatalogPages),
		"resources/list listed 2998 duplicate entries",
		"prompts/list repeated a cursor after 2 pages",
		"prompts/list listed 3 duplicate entries",
	} {
		if !strings.Contains(notices, want) {
			t.Errorf("notices lack %q:\n%s", want, notices)
		}
	}
}

// A tool whose execution.taskSupport is "required" is refused before anything is
// asked or sent, with a sentence saying why; "optional" is called normally.
func TestCall_TaskSupportRequiredRefusedUpFront(t *testing.T) {
	tasks := sessiontest.RawServer(t, "tasks", trust.Trusted, sessiontest.Script(sessiontest.Page(
		`{"name":"research","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"execution":{"taskSupport":"required"}}`,
		`{"name":"maybe","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"execution":{"taskSupport":"optional"}}`)))
	m := sessiontest.Start(t, sessiontest.NewConfig(tasks), session.Options{MemoryTaint: true})
	if ti := sessiontest.MustTool(t, m, "tasks", "research"); ti.TaskSupport != "required" {
		t.Errorf("research TaskSupport = %q", ti.TaskSupport)
	}
	if ti := sessiontest.MustTool(t, m, "tasks", "maybe"); ti.TaskSupport != "optional" {
		t.Errorf("maybe TaskSupport = %q", ti.TaskSupport)
	}
	_, err := m.Call(context.Background(), model.CallRequest{Server: "tasks", Tool: "research"})
	if !errors.Is(err, session.ErrTaskRequired) {
		t.Errorf("required: err %v, want ErrTaskRequired before any round trip", err)
	}
	if _, err := m.Call(context.Background(), model.CallRequest{Server: "tasks", Tool: "maybe"}); err != nil {
		t.Errorf("optional: err %v", err)
	}
}

// A read question waits; the server's trust changes under it: the question is
// withdrawn (it showed a trust that is no longer true) and the read is denied.
func TestChannels_QuestionWithdrawnWhenTrustChanges(t *testing.T) {
	m := sessiontest.ChannelManager(t, session.Options{}, map[string]*mcp.Server{"b": sessiontest.ChannelServer(nil)},
		sessiontest.InProcServer("b", trust.Trusted, func(s *config.Server) { s.Resources = trust.Ask }))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := m.ReadResource(ctx, model.ReadRequest{Server: "b", URI: "notes://inbox"})
		done <- err
	}()
	for {
		ev, ok := m.Next(ctx)
		if !ok {
			t.Fatal("no question")
		}
		if _, ok := ev.(model.ApprovalRequested); ok {
			break
		}
	}
	if err := m.SetServerTrust("b", trust.Untrusted); err != nil {
		t.Fatal(err)
	}
	err := <-done
	var denied *model.DeniedError
	if !errors.As(err, &denied) || !strings.Contains(err.Error(), "server trust trusted → untrusted") {
		t.Fatalf("read after the trust changed under its question: %v", err)
	}
}

// "Allow for this context" on a read grants the server's resources channel for that
// context (later reads run unasked, by grant); a trust change ends the grant.
func TestChannels_GrantCoversChannelUntilTrustChanges(t *testing.T) {
	m := sessiontest.ChannelManager(t, session.Options{}, map[string]*mcp.Server{"b": sessiontest.ChannelServer(nil)},
		sessiontest.InProcServer("b", trust.Trusted, func(s *config.Server) { s.Resources = trust.Ask }))
	a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.AllowForContext}, model.Response{Answer: model.Deny}, model.Response{Answer: model.Deny})
	ctx := context.Background()
	if _, err := m.ReadResource(ctx, model.ReadRequest{Context: "a", Server: "b", URI: "notes://note/1"}); err != nil {
		t.Fatal(err)
	}
	<-a.Seen
	out, err := m.ReadResource(ctx, model.ReadRequest{Context: "a", Server: "b", URI: "notes://note/2"})
	if err != nil || out.Verdict.By != trust.DecidedByGrant {
		t.Fatalf("second read in the granted context: %+v, %v", out, err)
	}
	if _, err := m.ReadResource(ctx, model.ReadRequest{Context: "other", Server: "b", URI: "notes://note/2"}); err == nil {
		t.Error("another context's read ran without a question")
	}
	<-a.Seen
	if err := m.SetServerTrust("b", trust.Untrusted); err != nil {
		t.Fatal(err)
	}
	if out, err := m.ReadResource(ctx, model.ReadRequest{Context: "a", Server: "b", URI: "notes://note/3"}); err == nil {
		t.Errorf("the grant survived a trust change: %+v", out)
	}
	if p := <-a.Seen; string(p.Request.Args) != `{"uri":"notes://note/3"}` {
		t.Errorf("asked about %s", p.Request.Args)
	}
}

// resources and prompts list_changed list them again.
func TestChannels_ListChangedRefreshes(t *testing.T) {
	srv := sessiontest.ChannelServer(nil)
	m := sessiontest.ChannelManager(t, session.Options{}, map[string]*mcp.Server{"b": srv}, sessiontest.InProcServer("b", trust.Trusted, nil))
	srv.AddResource(&mcp.Resource{URI: "notes://new", Name: "new"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "new"}}}, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "second"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	sessiontest.WaitFor(t, "the new resource and prompt", 10*time.Second, func() bool {
		sv, _ := m.Snapshot().Server("b")
		return len(sv.Resources) == 2 && len(sv.Prompts) == 2
	})
}

// A server that never answers resources/list still becomes ready with its tools;
// the listing that did not finish is a notice.
func TestChannels_HangingListIsANoticeNotAFailure(t *testing.T) {
	srv := sessiontest.ChannelServer(func(s *mcp.Server) {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "resources/list" {
					<-ctx.Done()
					return nil, ctx.Err()
				}
				return next(ctx, method, req)
			}
		})
	})
	srv.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	m := sessiontest.ChannelManager(t, session.Options{}, map[string]*mcp.Server{"b": srv}, sessiontest.InProcServer("b", trust.Trusted, func(s *config.Server) { s.ConnectTimeout = time.Second }))
	sv := sessiontest.MustServer(t, m, "b", model.StatusReady)
	sessiontest.MustTool(t, m, "b", "t")
	if len(sv.Prompts) != 1 || !strings.Contains(strings.Join(sv.Notices, "\n"), "resources/list") {
		t.Errorf("prompts %+v, notices %q", sv.Prompts, sv.Notices)
	}
}

// resources/updated is handed on only for a URI subscribed to: a server that names
// another URI (here a sending middleware rewrites it) is dropped; after Unsubscribe
// the subscribed URI is dropped too.
func TestChannels_ResourceUpdatedOnlyForSubscribed(t *testing.T) {
	srv := sessiontest.ChannelServer(nil)
	srv.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.ResourceUpdatedNotificationParams); ok && p.URI == "notes://inbox" {
				p.URI = "notes://never-subscribed\x1b[2J"
			}
			return next(ctx, method, req)
		}
	})
	m := sessiontest.ChannelManager(t, session.Options{}, map[string]*mcp.Server{"b": srv}, sessiontest.InProcServer("b", trust.Trusted, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, u := range []string{"notes://inbox", "notes://note/1"} {
		if err := m.Subscribe(ctx, "b", u); err != nil {
			t.Fatal(err)
		}
	}
	next := func() model.ResourceUpdated {
		t.Helper()
		for {
			ev, ok := m.Next(ctx)
			if !ok {
				t.Fatal("no resources/updated event")
			}
			if u, ok := ev.(model.ResourceUpdated); ok {
				return u
			}
		}
	}
	_ = srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "notes://inbox"})
	_ = srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "notes://note/1"})
	if u := next(); u.URI != "notes://note/1" || u.Server != "b" {
		t.Fatalf("first update handed on = %+v, want notes://note/1 (the rewritten URI is not subscribed)", u)
	}
	if err := m.Unsubscribe(ctx, "b", "notes://note/1"); err != nil {
		t.Fatal(err)
	}
	if err := m.Subscribe(ctx, "b", "notes://note/2"); err != nil {
		t.Fatal(err)
	}
	_ = srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "notes://note/1"})
	_ = srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "notes://note/2"})
	if u := next(); u.URI != "notes://note/2" {
		t.Fatalf("after unsubscribing note/1: %+v", u)
	}
}

// Fix hints are worked out with the channels in the toolset: a trifecta whose
// private-data leg is only notes' resources gets hints (drop notes' label, block
// notes), and no hint names a channel as a tool.
func TestChannels_FixHintsCountChannels(t *testing.T) {
	web := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	web.AddTool(&mcp.Tool{Name: "fetch", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	m := sessiontest.ChannelManager(t, session.Options{}, map[string]*mcp.Server{"notes": sessiontest.ChannelServer(nil), "web": web},
		sessiontest.InProcServer("notes", trust.Trusted, func(s *config.Server) { s.Labels = []trust.Leg{trust.LegPrivateData} }),
		sessiontest.InProcServer("web", trust.Untrusted, nil))
	snap := m.Snapshot()
	var tri *trust.Hazard
	for i, h := range snap.Hazards {
		if h.Kind == trust.HazardLethalTrifecta {
			tri = &snap.Hazards[i]
		}
	}
	if tri == nil {
		t.Fatalf("no trifecta: %+v", snap.Hazards)
	}
	fixes := snap.Fixes(trust.DefaultPolicy(), *tri)
	var dropLabel bool
	for _, f := range fixes {
		for _, c := range f.Changes {
			if c.Tool == trust.ResourceReadTool || c.Tool == trust.PromptGetTool {
				t.Errorf("a fix names a channel as a tool: %+v", c)
			}
			if c.Kind == trust.ChangeDropServerLabel && c.Server == "notes" && f.Effect == trust.FixBreaks {
				dropLabel = true
			}
		}
	}
	if !dropLabel {
		t.Errorf("dropping notes' private-data label is not offered: %+v", fixes)
	}
}

// A snapshot records each server's resources, templates and prompts (sorted, so two
// snapshots of the same servers are the same bytes), and check --snapshot finds the
// same channel hazards as the live session.
func TestSnapshot_RecordsChannelsAndOfflineHazardsMatchLive(t *testing.T) {
	cfgs := []config.Server{
		sessiontest.InProcServer("notes", trust.Trusted, func(s *config.Server) { s.Labels = []trust.Leg{trust.LegPrivateData} }),
		sessiontest.InProcServer("web", trust.Untrusted, nil),
	}
	live := sessiontest.ChannelManager(t, session.Options{}, map[string]*mcp.Server{"notes": sessiontest.ChannelServer(nil), "web": sessiontest.ChannelServer(nil)}, cfgs...)
	var buf bytes.Buffer
	if err := live.Record().Write(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"uri": "notes://inbox"`) || !strings.Contains(buf.String(), `"uriTemplate": "notes://note/{id}"`) || !strings.Contains(buf.String(), `"name": "summarise"`) {
		t.Fatalf("the snapshot does not hold the channels:\n%s", buf.String())
	}
	rec, err := record.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	off, _ := session.NewOffline(sessiontest.NewConfig(cfgs...), rec, session.Options{MemoryTaint: true})
	defer off.Close()
	hz := func(s *model.Snapshot) string {
		var out []string
		for _, h := range s.Hazards {
			out = append(out, fmt.Sprintf("%s %v", h.Kind, h.Legs))
		}
		return strings.Join(out, "\n")
	}
	if l, o := hz(live.Snapshot()), hz(off.Snapshot()); l != o || !strings.Contains(l, "notes__resources/read") {
		t.Errorf("hazards differ\nlive:\n%s\noffline:\n%s", l, o)
	}
	if sv, _ := off.Snapshot().Server("notes"); len(sv.Resources) != 1 || len(sv.ResourceTemplates) != 1 || len(sv.Prompts) != 1 {
		t.Errorf("offline notes: %+v", sv)
	}
}
