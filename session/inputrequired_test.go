//lint:file-ignore SA1019 sampling and roots are deprecated by the 2026-07-28 spec (SEP-2577); airlock supports them so today's servers can be explored

package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// A server at protocol 2026-07-28 asks for input inside an input_required result
// (SEP-2322) instead of sending elicitation/create: the request reaches the person
// as the same ElicitationRequested event, and the answer goes back in the retried
// call's inputResponses.
func TestInputRequired_ElicitationReachesTheSameQuestion(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mrtr", Version: "1"}, nil)
	var sawProtocol string
	// Every request the server sends the client: with input_required there must be
	// none (a go-sdk server falls back to elicitation/create for older clients).
	var sent []string
	srv.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			sent = append(sent, method)
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "deploy", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			sawProtocol = req.Session.InitializeParams().ProtocolVersion
			resp, ok := req.Params.InputResponses["confirm"]
			if !ok {
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{
						Message: "Deploy to production?",
						RequestedSchema: map[string]any{
							"type":       "object",
							"properties": map[string]any{"who": map[string]any{"type": "string"}},
						},
					}},
					RequestState: "deploy-1",
				}, nil, nil
			}
			er, _ := resp.(*mcp.ElicitResult)
			if er == nil || req.Params.RequestState != "deploy-1" {
				return nil, nil, nil
			}
			who, _ := er.Content["who"].(string)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: er.Action + ":" + who}}}, nil, nil
		})
	cfg := sessiontest.NewConfig(config.Server{Name: "mrtr", Trust: trust.Trusted, Protocol: "2026-07-28"})
	m := sessiontest.Start(t, cfg, session.Options{InProcess: map[string]*mcp.Server{"mrtr": srv}})
	if sv := sessiontest.MustServer(t, m, "mrtr", model.StatusReady); sv.Protocol != "2026-07-28" {
		t.Fatalf("protocol = %q, want 2026-07-28", sv.Protocol)
	}
	log := sessiontest.CollectEvents(t, m)
	go func() {
		ev := log.Wait(t, "the elicitation", 10*time.Second, func(ev model.Event) bool { _, ok := ev.(model.ElicitationRequested); return ok })
		e := ev.(model.ElicitationRequested).Elicitation
		if e.Message != "Deploy to production?" || e.Server != "mrtr" || e.CallID == "" {
			t.Errorf("elicitation = %+v", e)
		}
		_ = m.AnswerElicitation(e.ID, "accept", map[string]any{"who": "Ada"})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := m.Call(ctx, model.CallRequest{Server: "mrtr", Tool: "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sessiontest.TextOf(out.Result); got != "accept:Ada" {
		t.Errorf("tool saw %q, want accept:Ada", got)
	}
	for _, method := range sent {
		if method == "elicitation/create" {
			t.Errorf("the server sent elicitation/create: the input_required round trip was not used (sent %v)", sent)
		}
	}
	if sawProtocol != "2026-07-28" {
		t.Errorf("the server saw protocol %q", sawProtocol)
	}
}

// Sampling and roots inside an input_required result: the sampling request is the
// same question (the person's reply goes back), and roots/list is answered with
// the configured roots.
func TestInputRequired_SamplingAndRootsReachTheSameAnswers(t *testing.T) {
	dir := t.TempDir()
	srv := mcp.NewServer(&mcp.Implementation{Name: "mrtr", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "plan", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if len(req.Params.InputResponses) == 0 {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
					//lint:ignore SA1019 testing a deprecated feature airlock supports
					"model": &mcp.CreateMessageParams{MaxTokens: 5, SystemPrompt: "plan it", Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "what next?"}}}},
					//lint:ignore SA1019 testing a deprecated feature airlock supports
					"roots": &mcp.ListRootsParams{},
				}}, nil, nil
			}
			var reply, roots string
			switch r := req.Params.InputResponses["model"].(type) {
			case *mcp.CreateMessageResult:
				if tc, ok := r.Content.(*mcp.TextContent); ok {
					reply = tc.Text
				}
			case *mcp.CreateMessageWithToolsResult:
				if len(r.Content) > 0 {
					if tc, ok := r.Content[0].(*mcp.TextContent); ok {
						reply = tc.Text
					}
				}
			}
			//lint:ignore SA1019 testing a deprecated feature airlock supports
			if lr, ok := req.Params.InputResponses["roots"].(*mcp.ListRootsResult); ok {
				for _, r := range lr.Roots {
					roots += r.URI
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: reply + "|" + roots}}}, nil, nil
		})
	cfg := sessiontest.NewConfig(config.Server{Name: "mrtr", Trust: trust.Trusted, Protocol: "2026-07-28", Roots: []string{dir}})
	m := sessiontest.Start(t, cfg, session.Options{InProcess: map[string]*mcp.Server{"mrtr": srv}})
	log := sessiontest.CollectEvents(t, m)
	go func() {
		r := waitSampling(t, log)
		if r.SystemPrompt != "plan it" || r.CallID == "" {
			t.Errorf("request = %+v", r)
		}
		_ = m.AnswerSampling(r.ID, model.SamplingAnswer{Reply: "rest"})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := m.Call(ctx, model.CallRequest{Server: "mrtr", Tool: "plan"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sessiontest.TextOf(out.Result), "rest|"+fileURI(dir); got != want {
		t.Errorf("tool saw %q, want %q", got, want)
	}
}
