//lint:file-ignore SA1019 sampling and roots are deprecated by the 2026-07-28 spec (SEP-2577); airlock supports them so today's servers can be explored

package session_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// samplingServer is a go-sdk server whose tool "ask" sends params as a sampling
// request during the call and returns the reply's text, or "error: ..." when the
// client refused.
func samplingServer(params func() *mcp.CreateMessageParams) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sampler", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			//lint:ignore SA1019 testing a deprecated feature airlock supports
			res, err := req.Session.CreateMessage(ctx, params())
			if err != nil {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "error: " + err.Error()}}}, nil, nil
			}
			text := ""
			if tc, ok := res.Content.(*mcp.TextContent); ok {
				text = tc.Text
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(res.Role) + "/" + res.Model + ": " + text}}}, nil, nil
		})
	return srv
}

func waitSampling(t *testing.T, log *sessiontest.EventLog) *model.SamplingRequest {
	t.Helper()
	ev := log.Wait(t, "a sampling request", 10*time.Second, func(ev model.Event) bool { _, ok := ev.(model.SamplingRequested); return ok })
	return ev.(model.SamplingRequested).Request
}

// A sampling request reaches the person with everything it carries; the reply they
// write goes back as the assistant's message.
func TestSampling_ReplyWrittenByHand(t *testing.T) {
	srv := samplingServer(func() *mcp.CreateMessageParams {
		return &mcp.CreateMessageParams{
			SystemPrompt:   "You are \x1b[31mred",
			IncludeContext: "allServers",
			MaxTokens:      42,
			Temperature:    0.5,
			ModelPreferences: &mcp.ModelPreferences{
				Hints: []*mcp.ModelHint{{Name: "claude"}}, SpeedPriority: 0.8,
			},
			Messages: []*mcp.SamplingMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "hello"}},
				{Role: "assistant", Content: &mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 1234)}},
			},
		}
	})
	m := sessiontest.Start(t, sessiontest.NewConfig(config.Server{Name: "sampler", Trust: trust.Trusted}), session.Options{InProcess: map[string]*mcp.Server{"sampler": srv}})
	log := sessiontest.CollectEvents(t, m)
	go func() {
		r := waitSampling(t, log)
		if r.Server != "sampler" || r.CallID == "" || r.SystemPrompt != "You are \x1b[31mred" || r.IncludeContext != "allServers" ||
			r.MaxTokens != 42 || r.Temperature != 0.5 || !slices.Equal(r.ModelHints, []string{"claude"}) || r.SpeedPriority != 0.8 {
			t.Errorf("request = %+v", r)
		}
		if len(r.Messages) != 2 || r.Messages[0].Role != "user" || r.Messages[0].Parts[0].Text != "hello" ||
			r.Messages[1].Parts[0] != (model.SamplingPart{Kind: "image", MIME: "image/png", Size: 1234}) {
			t.Errorf("messages = %+v", r.Messages)
		}
		if err := m.AnswerSampling(r.ID, model.SamplingAnswer{Reply: "hi from a person"}); err != nil {
			t.Error(err)
		}
	}()
	out, err := m.Call(context.Background(), model.CallRequest{Server: "sampler", Tool: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sessiontest.TextOf(out.Result); !strings.HasPrefix(got, "assistant/airlock") || !strings.HasSuffix(got, ": hi from a person") {
		t.Errorf("server saw %q", got)
	}
	log.Wait(t, "the question closed", 5*time.Second, func(ev model.Event) bool { _, ok := ev.(model.SamplingClosed); return ok })
	if sv := sessiontest.MustServer(t, m, "sampler", model.StatusReady); !slices.Equal(sv.Deprecated, []string{session.DeprecatedSampling}) {
		t.Errorf("Deprecated = %v, want [sampling]", sv.Deprecated)
	}
	if err := m.AnswerSampling(12345, model.SamplingAnswer{Decline: true}); !errors.Is(err, session.ErrNoSampling) {
		t.Errorf("answering an unknown request: %v", err)
	}
}

// Declining sends the server an error, never a reply.
func TestSampling_DeclineGivesTheServerAnError(t *testing.T) {
	srv := samplingServer(func() *mcp.CreateMessageParams {
		return &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}
	})
	m := sessiontest.Start(t, sessiontest.NewConfig(config.Server{Name: "sampler", Trust: trust.Trusted}), session.Options{InProcess: map[string]*mcp.Server{"sampler": srv}})
	log := sessiontest.CollectEvents(t, m)
	go func() {
		r := waitSampling(t, log)
		_ = m.AnswerSampling(r.ID, model.SamplingAnswer{Decline: true})
	}()
	out, err := m.Call(context.Background(), model.CallRequest{Server: "sampler", Tool: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sessiontest.TextOf(out.Result); !strings.Contains(got, "error:") || !strings.Contains(got, "declined") {
		t.Errorf("server saw %q, want a decline error", got)
	}
}

// A request of 10,000 messages (or more text than a person is shown) is declined at
// once, unseen, with an error that names the bound; nothing waits for the person.
func TestSampling_TenThousandMessagesDeclinedAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params func() *mcp.CreateMessageParams
		want   string
	}{
		{"10000 messages", func() *mcp.CreateMessageParams {
			p := &mcp.CreateMessageParams{MaxTokens: 1}
			for range 10000 {
				p.Messages = append(p.Messages, &mcp.SamplingMessage{Role: "user", Content: &mcp.TextContent{Text: "x"}})
			}
			return p
		}, "10000 messages, more than the 1000"},
		{"huge text", func() *mcp.CreateMessageParams {
			return &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{
				{Role: "user", Content: &mcp.TextContent{Text: strings.Repeat("y", 1<<20)}}}}
		}, "more than the 256 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := samplingServer(tc.params)
			m := sessiontest.Start(t, sessiontest.NewConfig(config.Server{Name: "sampler", Trust: trust.Trusted}), session.Options{InProcess: map[string]*mcp.Server{"sampler": srv}})
			log := sessiontest.CollectEvents(t, m)
			began := time.Now()
			out, err := m.Call(context.Background(), model.CallRequest{Server: "sampler", Tool: "ask"})
			if err != nil {
				t.Fatal(err)
			}
			if got := sessiontest.TextOf(out.Result); !strings.Contains(got, tc.want) {
				t.Errorf("server saw %q, want it to name the bound (%q)", got, tc.want)
			}
			if d := time.Since(began); d > 30*time.Second {
				t.Errorf("took %s", d)
			}
			if log.Find(func(ev model.Event) bool { _, ok := ev.(model.SamplingRequested); return ok }) != nil {
				t.Error("an over-bound request reached the person")
			}
			log.Wait(t, "the person is told", 5*time.Second, func(ev model.Event) bool {
				l, ok := ev.(model.LogLine)
				return ok && l.Source == "airlock" && strings.Contains(l.Text, "declined a sampling request unseen")
			})
		})
	}
}

// A sampling request while no call to the server is in flight is declined, like
// elicitation: it would land on whatever the person is doing.
func TestSampling_OutsideACallDeclined(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sampler", Version: "1"}, nil)
	got := make(chan error, 1)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/initialized" {
				ss := req.GetSession().(*mcp.ServerSession)
				go func() {
					//lint:ignore SA1019 testing a deprecated feature airlock supports
					_, err := ss.CreateMessage(context.Background(), &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "x"}}}})
					got <- err
				}()
			}
			return next(ctx, method, req)
		}
	})
	m := sessiontest.Start(t, sessiontest.NewConfig(config.Server{Name: "sampler", Trust: trust.Trusted}), session.Options{InProcess: map[string]*mcp.Server{"sampler": srv}})
	_ = m
	select {
	case err := <-got:
		if err == nil || !strings.Contains(err.Error(), "no call to this server was in flight") {
			t.Errorf("sampling outside a call: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
}

// declineAsker is what airlock call uses without a terminal.
type declineAsker struct {
	mu    sync.Mutex
	asked []string
}

func (d *declineAsker) Elicit(_ context.Context, e *model.Elicitation) (string, map[string]any, error) {
	d.mu.Lock()
	d.asked = append(d.asked, "elicit:"+e.Message)
	d.mu.Unlock()
	return "decline", nil, nil
}

func (d *declineAsker) Sample(_ context.Context, r *model.SamplingRequest) (model.SamplingAnswer, error) {
	d.mu.Lock()
	d.asked = append(d.asked, "sample:"+r.Server)
	d.mu.Unlock()
	return model.SamplingAnswer{Decline: true}, nil
}

// With an Asker (airlock call, check) nothing becomes an event nobody reads: the
// asker answers at once, and no request waits for the call timeout.
func TestAsker_AnswersWithoutEvents(t *testing.T) {
	srv := samplingServer(func() *mcp.CreateMessageParams {
		return &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "elicit", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil, nil
		})
	asker := &declineAsker{}
	cfg := sessiontest.NewConfig(config.Server{Name: "sampler", Trust: trust.Trusted, CallTimeout: 30 * time.Second})
	m := sessiontest.Start(t, cfg, session.Options{InProcess: map[string]*mcp.Server{"sampler": srv}, Asker: asker})
	began := time.Now()
	out, err := m.Call(context.Background(), model.CallRequest{Server: "sampler", Tool: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sessiontest.TextOf(out.Result); !strings.Contains(got, "declined") {
		t.Errorf("sampling: server saw %q", got)
	}
	out, err = m.Call(context.Background(), model.CallRequest{Server: "sampler", Tool: "elicit"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sessiontest.TextOf(out.Result); got != "decline" {
		t.Errorf("elicitation: server saw %q", got)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("took %s: something waited", d)
	}
	if !slices.Equal(asker.asked, []string{"sample:sampler", "elicit:name?"}) {
		t.Errorf("asked %v", asker.asked)
	}
}

// rootsServer is a go-sdk server whose tool "roots" lists the client's roots, and
// which counts roots/list_changed notifications.
func rootsServer(changed chan<- struct{}) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "rooted", Version: "1"}, &mcp.ServerOptions{
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "roots", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			caps := req.Session.InitializeParams().Capabilities
			if caps == nil || caps.RootsV2 == nil && caps.Roots == (mcp.RootCapabilities{}) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "not declared"}}}, nil, nil
			}
			//lint:ignore SA1019 testing a deprecated feature airlock supports
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, nil, err
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			slices.Sort(uris)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(uris, " ")}}}, nil, nil
		})
	return srv
}

func fileURI(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

// Roots are declared only to a server configured with them, answered exactly, and a
// change is announced with roots/list_changed.
func TestRoots_DeclaredOnlyWhenConfiguredAndChangesNotified(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	changed := make(chan struct{}, 8)
	withRoots := config.Server{Name: "rooted", Trust: trust.Trusted, Roots: []string{a, b}}
	without := config.Server{Name: "plain", Trust: trust.Trusted}
	m := sessiontest.Start(t, sessiontest.NewConfig(withRoots, without), session.Options{InProcess: map[string]*mcp.Server{
		"rooted": rootsServer(changed), "plain": rootsServer(make(chan struct{}, 8)),
	}})
	call := func(server string) string {
		t.Helper()
		out, err := m.Call(context.Background(), model.CallRequest{Server: server, Tool: "roots"})
		if err != nil {
			t.Fatal(err)
		}
		return sessiontest.TextOf(out.Result)
	}
	want := []string{fileURI(a), fileURI(b)}
	slices.Sort(want)
	if got := call("rooted"); got != strings.Join(want, " ") {
		t.Errorf("roots/list = %q, want %q", got, want)
	}
	if got := call("plain"); got != "not declared" {
		t.Errorf("a server without roots in the config: %q, want the capability not declared", got)
	}
	if sv := sessiontest.MustServer(t, m, "rooted", model.StatusReady); !slices.Equal(sv.Roots, []string{fileURI(a), fileURI(b)}) || !slices.Contains(sv.Deprecated, session.DeprecatedRoots) {
		t.Errorf("ServerInfo roots %v deprecated %v", sv.Roots, sv.Deprecated)
	}

	// A live change: b goes, c comes.
	c := t.TempDir()
	if err := m.SetRoots("rooted", []string{a, "file://" + filepath.ToSlash(c)}, ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no roots/list_changed after SetRoots")
	}
	want = []string{fileURI(a), fileURI(c)}
	slices.Sort(want)
	sessiontest.WaitFor(t, "the new roots", 10*time.Second, func() bool { return call("rooted") == strings.Join(want, " ") })
	if err := m.SetRoots("rooted", []string{filepath.Join(a, "missing")}, ""); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("SetRoots with a missing folder: %v", err)
	}

	// Roots given to a server that connected without them: it is reconnected to
	// declare the capability.
	if err := m.SetRoots("plain", []string{a}, ""); err != nil {
		t.Fatal(err)
	}
	sessiontest.WaitFor(t, "plain reconnected with roots", 20*time.Second, func() bool {
		sv, _ := m.Snapshot().Server("plain")
		if sv.Status != model.StatusReady {
			return false
		}
		out, err := m.Call(context.Background(), model.CallRequest{Server: "plain", Tool: "roots"})
		return err == nil && sessiontest.TextOf(out.Result) == fileURI(a)
	})
}

// server-filesystem started with no directories takes its allowed directories from
// the client's roots: with roots from the config, list_allowed_directories returns
// exactly them.
func TestRoots_FilesystemListsExactlyTheConfiguredRoots(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{"project", "scratch"} {
		if err := os.Mkdir(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	src := "[servers.fs]\ncommand = \"x\"\nroots = [\"~/project\", \"file://" + filepath.ToSlash(filepath.Join(home, "scratch")) + "\"]\n"
	parsed, err := config.Parse([]byte(src), "config.toml", func(k string) (string, bool) {
		switch k {
		case "HOME":
			return home, true
		case "XDG_STATE_HOME":
			return filepath.Join(home, "state"), true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	fs := sessiontest.NPMServer(t, "fs", "mcp-server-filesystem", trust.Trusted)
	fs.Roots = parsed.Servers[0].Roots
	m := sessiontest.Start(t, sessiontest.NewConfig(fs), session.Options{})
	sessiontest.MustServer(t, m, "fs", model.StatusReady)
	want := []string{filepath.Join(home, "project"), filepath.Join(home, "scratch")}
	var got string
	// The server asks for roots after initialized; its answer lands asynchronously.
	sessiontest.WaitFor(t, "list_allowed_directories to list the roots", 20*time.Second, func() bool {
		out, err := m.Call(context.Background(), model.CallRequest{Server: "fs", Tool: "list_allowed_directories"})
		if err != nil {
			t.Logf("call: %v", err)
			return false
		}
		got = sessiontest.TextOf(out.Result)
		return dirsListed(got, want)
	})
	if sv := sessiontest.MustServer(t, m, "fs", model.StatusReady); !slices.Contains(sv.Deprecated, session.DeprecatedRoots) {
		t.Errorf("Deprecated = %v, want roots recorded", sv.Deprecated)
	}
}

// dirsListed reports whether list_allowed_directories' text lists exactly want.
func dirsListed(text string, want []string) bool {
	var got []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "/") {
			got = append(got, line)
		}
	}
	slices.Sort(got)
	w := slices.Clone(want)
	slices.Sort(w)
	return slices.Equal(got, w)
}

// server-everything offers trigger-sampling-request only to a client that declares
// sampling: it is listed, a reply written by hand reaches it, and a decline comes
// back as its error.
func TestSampling_ServerEverythingAnsweredByHandAndDeclined(t *testing.T) {
	ev := sessiontest.NPMServer(t, "everything", "mcp-server-everything", trust.Trusted)
	m := sessiontest.Start(t, sessiontest.NewConfig(ev), session.Options{})
	sessiontest.MustServer(t, m, "everything", model.StatusReady)
	sessiontest.MustTool(t, m, "everything", "trigger-sampling-request")
	log := sessiontest.CollectEvents(t, m)
	allowEveryCall(t, m, log)
	answers := make(chan model.SamplingAnswer, 2)
	answers <- model.SamplingAnswer{Reply: "a reply typed by a person"}
	answers <- model.SamplingAnswer{Decline: true}
	go func() {
		seen := map[uint64]bool{}
		for range 2 {
			var r *model.SamplingRequest
			sessiontest.WaitFor(t, "a sampling request", 30*time.Second, func() bool {
				e := log.Find(func(e model.Event) bool {
					s, ok := e.(model.SamplingRequested)
					return ok && !seen[s.Request.ID]
				})
				if e != nil {
					r = e.(model.SamplingRequested).Request
				}
				return r != nil
			})
			seen[r.ID] = true
			if r.SystemPrompt != "You are a helpful test server." || r.MaxTokens != 7 || len(r.Messages) != 1 || !strings.Contains(r.Messages[0].Parts[0].Text, "say hi") {
				t.Errorf("request = %+v", r)
			}
			_ = m.AnswerSampling(r.ID, <-answers)
		}
	}()
	out, err := m.Call(context.Background(), model.CallRequest{Server: "everything", Tool: "trigger-sampling-request", Args: sessiontest.Args(`{"prompt":"say hi","maxTokens":7}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := sessiontest.TextOf(out.Result); out.Result.IsError || !strings.Contains(got, "a reply typed by a person") {
		t.Errorf("answered by hand: result %q", got)
	}
	out, err = m.Call(context.Background(), model.CallRequest{Server: "everything", Tool: "trigger-sampling-request", Args: sessiontest.Args(`{"prompt":"say hi","maxTokens":7}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := sessiontest.TextOf(out.Result); !out.Result.IsError || !strings.Contains(got, "declined") {
		t.Errorf("declined: result %q (isError %v), want the decline as the tool's error", got, out.Result.IsError)
	}
}

// allowEveryCall answers every approval question with allow once (the person means
// to run the tool; the test is about what happens during the call).
func allowEveryCall(t *testing.T, m *session.Manager, log *sessiontest.EventLog) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		answered := map[uint64]bool{}
		for ctx.Err() == nil {
			var todo []*model.Pending
			for _, ev := range log.Events() {
				if r, ok := ev.(model.ApprovalRequested); ok && !answered[r.Pending.ID] {
					todo = append(todo, r.Pending)
				}
			}
			for _, p := range todo {
				answered[p.ID] = true
				_ = m.Engine().Answer(p.ID, model.Response{Answer: model.AllowOnce})
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
}

// A server that sends many sampling requests at once gets at most
// MaxSamplingWaiting questions; the rest are declined unseen.
func TestSampling_FloodBoundedPerServer(t *testing.T) {
	const n = 20
	srv := mcp.NewServer(&mcp.Implementation{Name: "sampler", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "flood", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			var wg sync.WaitGroup
			var mu sync.Mutex
			declined := 0
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					//lint:ignore SA1019 testing a deprecated feature airlock supports
					_, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "x"}}}})
					if err != nil {
						mu.Lock()
						declined++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(declined)}}}, nil, nil
		})
	m := sessiontest.Start(t, sessiontest.NewConfig(config.Server{Name: "sampler", Trust: trust.Trusted}), session.Options{InProcess: map[string]*mcp.Server{"sampler": srv}})
	log := sessiontest.CollectEvents(t, m)
	isReq := func(ev model.Event) bool { _, ok := ev.(model.SamplingRequested); return ok }
	go func() {
		sessiontest.WaitFor(t, "the questions", 10*time.Second, func() bool { return log.Count(isReq) >= model.MaxSamplingWaiting })
		time.Sleep(300 * time.Millisecond) // the rest are declined meanwhile
		var ids []uint64
		for _, ev := range log.Events() {
			if r, ok := ev.(model.SamplingRequested); ok {
				ids = append(ids, r.Request.ID)
			}
		}
		for _, id := range ids {
			_ = m.AnswerSampling(id, model.SamplingAnswer{Decline: true})
		}
	}()
	out, err := m.Call(context.Background(), model.CallRequest{Server: "sampler", Tool: "flood"})
	if err != nil {
		t.Fatal(err)
	}
	if got := log.Count(isReq); got != model.MaxSamplingWaiting {
		t.Errorf("%d questions reached the person, want %d", got, model.MaxSamplingWaiting)
	}
	if got := sessiontest.TextOf(out.Result); got != strconv.Itoa(n) {
		t.Errorf("%s of %d declined, want all", got, n)
	}
}

// A server's logging notification is recorded as use of a deprecated feature.
func TestDeprecated_LoggingRecorded(t *testing.T) {
	tool := `{"name":"work","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`
	sv := sessiontest.RawServer(t, "logger", trust.Trusted, sessiontest.Script(sessiontest.Page(tool), `"flood":{"log":1}`))
	m := sessiontest.Start(t, sessiontest.NewConfig(sv), session.Options{})
	if got := sessiontest.MustServer(t, m, "logger", model.StatusReady).Deprecated; len(got) != 0 {
		t.Fatalf("Deprecated before any use = %v", got)
	}
	if _, err := m.Call(context.Background(), model.CallRequest{Server: "logger", Tool: "work"}); err != nil {
		t.Fatal(err)
	}
	sessiontest.WaitFor(t, "logging recorded", 10*time.Second, func() bool {
		sv, _ := m.Snapshot().Server("logger")
		return slices.Equal(sv.Deprecated, []string{session.DeprecatedLogging})
	})
	if ti := sessiontest.MustTool(t, m, "logger", "work"); !slices.Equal(ti.ServerDeprecated(), []string{session.DeprecatedLogging}) {
		t.Errorf("ToolInfo.ServerDeprecated = %v: the cached snapshot part was not rebuilt", ti.ServerDeprecated())
	}
}

// A sampling request the server withdraws (its own timeout) closes the question;
// answering it afterwards says it no longer waits.
func TestSampling_WithdrawnByTheServerClosesTheQuestion(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sampler", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			_, err := req.Session.CreateMessage(short, &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "x"}}}})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(err != nil)}}}, nil, nil
		})
	m := sessiontest.Start(t, sessiontest.NewConfig(config.Server{Name: "sampler", Trust: trust.Trusted}), session.Options{InProcess: map[string]*mcp.Server{"sampler": srv}})
	log := sessiontest.CollectEvents(t, m)
	out, err := m.Call(context.Background(), model.CallRequest{Server: "sampler", Tool: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if sessiontest.TextOf(out.Result) != "true" {
		t.Fatalf("the server's request did not time out: %q", sessiontest.TextOf(out.Result))
	}
	r := waitSampling(t, log)
	log.Wait(t, "the question closed", 10*time.Second, func(ev model.Event) bool { c, ok := ev.(model.SamplingClosed); return ok && c.ID == r.ID })
	if err := m.AnswerSampling(r.ID, model.SamplingAnswer{Reply: "late"}); !errors.Is(err, session.ErrNoSampling) {
		t.Errorf("answering a withdrawn request: %v", err)
	}
}
