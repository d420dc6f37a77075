package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/trust"
)

// callTool calls name with a small argument object and fails the test on a
// transport error.
func callTool(t *testing.T, cs *mcp.ClientSession, name string) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"x": "y"}})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}

// An agent cannot shed its taint by starting again under another client name: the
// context is the token's, the client name only a label. Two agents with one token
// share one taint.
func TestAgentIdentity_NewClientNameKeepsTaint(t *testing.T) {
	web, post, cfg := sessiontest.TaintSetup(t.TempDir())
	m := sessiontest.StartUpstreams(t, cfg, session.Options{}, map[string]*sessiontest.Upstream{"web": web, "post": post})
	g := startGateway(t, m)
	a := agentNamed(t, g, "claude-code")
	callTool(t, a, "web__fetch") // an open-world result: taints the agent's context
	b := agentNamed(t, g, "a-fresh-name")
	if res := callTool(t, b, "post__post_msg"); !res.IsError || !strings.Contains(resultText(res), "nobody answered") {
		t.Errorf("the same token under a new client name ran an exfiltration call unasked after its taint: %s", resultText(res))
	}
	if n := len(post.Calls("post_msg")); n != 0 {
		t.Errorf("post_msg ran %d times, want none", n)
	}
}

// tokenSetup is a trusted mail server whose send_email (a write) asks, with an
// audit log.
func tokenSetup(t *testing.T) (*sessiontest.Upstream, *session.Manager, *sessiontest.EventLog, string) {
	t.Helper()
	mail := sessiontest.NewUpstream("mail")
	mail.Add("send_email", "Send an email.", sessiontest.WriteHints())
	log, path := sessiontest.OpenAuditLog(t)
	m := sessiontest.StartUpstreams(t, sessiontest.NewConfig(sessiontest.Inproc("mail", trust.Trusted)), session.Options{Audit: log}, map[string]*sessiontest.Upstream{"mail": mail})
	return mail, m, sessiontest.CollectEvents(t, m), path
}

// A context grant is the token's: agent B, with a token of its own, claiming agent
// A's client name does not inherit A's "allow for this context"; another agent with
// A's token does, whatever it calls itself. The grant and the audit name the token.
func TestAgentIdentity_GrantIsTheTokens(t *testing.T) {
	mail, m, evs, path := tokenSetup(t)
	g := startGateway(t, m)
	t1, t2 := namedToken(t, g, "ci-bot"), namedToken(t, g, "laptop")
	a := mustAgentWithToken(t, g, t1, "claude-code")
	answerInBackground(t, m, evs, 1, model.Response{Answer: model.AllowForContext})
	if res := callTool(t, a, "mail__send_email"); res.IsError {
		t.Fatalf("allowed for the context: %s", resultText(res))
	}
	grants := m.Engine().Grants()
	if len(grants) != 1 || grants[0].Context != "token:ci-bot" {
		t.Fatalf("grants %+v, want one for context token:ci-bot", grants)
	}

	// B: another token, the same client name. Its call asks.
	b := mustAgentWithToken(t, g, t2, "claude-code")
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- callTool(t, b, "mail__send_email") }()
	p := evs.Pending(t, 2)
	if p.Request.Context != "token:laptop" || p.Request.Client != "claude-code" {
		t.Errorf("B's question is for context %q client %q, want token:laptop, claude-code", p.Request.Context, p.Request.Client)
	}
	if err := m.Engine().Answer(p.ID, model.Response{Answer: model.Deny, Reason: "not you"}); err != nil {
		t.Fatal(err)
	}
	if res := <-done; !res.IsError {
		t.Errorf("B's call ran on A's grant: %s", resultText(res))
	}

	// C: A's token under another name shares A's grant.
	c := mustAgentWithToken(t, g, t1, "another-name")
	if res := callTool(t, c, "mail__send_email"); res.IsError {
		t.Errorf("the same token under another client name did not share its grant: %s", resultText(res))
	}
	if n := len(mail.Calls("send_email")); n != 2 {
		t.Errorf("send_email ran %d times, want 2 (A's and C's)", n)
	}
	var contexts []string
	for _, r := range sessiontest.AuditRecords(t, path) {
		if r.Kind == "decision" {
			contexts = append(contexts, r.Context+"/"+r.Client)
		}
	}
	want := []string{"token:ci-bot/claude-code", "token:laptop/claude-code", "token:ci-bot/another-name"}
	if strings.Join(contexts, " ") != strings.Join(want, " ") {
		t.Errorf("decision records name %q, want %q", contexts, want)
	}
}

// Revoking a token while its agent's question waits withdraws the question, ends
// the session and runs nothing; the token is refused from then on.
func TestAgentIdentity_RevokeWithdrawsAndEnds(t *testing.T) {
	f := ciBotSetup(t, "claude-code")
	mail, evs, g, tok, a := f.mail, f.evs, f.g, f.tok, f.a
	done := make(chan error, 1)
	go func() {
		res, err := a.CallTool(context.Background(), &mcp.CallToolParams{Name: "mail__send_email", Arguments: map[string]any{"to": "x"}})
		if err == nil && !res.IsError {
			done <- errors.New("the call ran: " + resultText(res))
			return
		}
		done <- nil
	}()
	p := evs.Pending(t, 1)
	if err := gateway.RevokeToken(gatewayStateDir(t, g), "ci-bot"); err != nil {
		t.Fatal(err)
	}
	closed := evs.Wait(t, "the question withdrawn", 10*time.Second, func(ev model.Event) bool {
		c, ok := ev.(model.ApprovalClosed)
		return ok && c.ID == p.ID
	}).(model.ApprovalClosed)
	if !strings.Contains(closed.Outcome, "token was revoked") {
		t.Errorf("the question closed with %q, want it to say the token was revoked", closed.Outcome)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the agent's call did not end")
	}
	if n := len(mail.Calls("send_email")); n != 0 {
		t.Errorf("send_email ran %d times after its token was revoked", n)
	}
	sessiontest.WaitFor(t, "the revoked token's session to end", 10*time.Second, func() bool { return g.OpenSessions() == 0 })
	if _, err := agentWithToken(t, g, tok, "claude-code"); err == nil {
		t.Error("a revoked token connected")
	}
	wantRevokedDecision(t, f.audit)
	// The default token still works.
	if _, err := agentWithToken(t, g, testToken, "claude-code"); err != nil {
		t.Errorf("the default token was refused: %v", err)
	}
}

// A token added by another process after the gateway started is accepted without
// a restart, and a session one token opened is refused to another.
func TestAgentIdentity_TokenAddedLaterAccepted(t *testing.T) {
	_, m, _, _ := tokenSetup(t)
	g := startGateway(t, m)
	if _, err := agentWithToken(t, g, strings.Repeat("ab", 32), "x"); err == nil {
		t.Fatal("an unknown token connected")
	}
	tok := namedToken(t, g, "added-later")
	cs, err := agentWithToken(t, g, tok, "x")
	if err != nil {
		t.Fatalf("a token added while the gateway ran was refused: %v", err)
	}
	// The default token's holder cannot use the named token's session.
	req, _ := http.NewRequest(http.MethodPost, g.URL(), strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("another token's request in the session got %d, want 403", resp.StatusCode)
	}
}

// A tokens file that cannot be read refuses every named token, ends their
// sessions and says why; the default token still works.
func TestAgentIdentity_UnreadableTokensFileFailsClosed(t *testing.T) {
	mail, m, evs, _ := tokenSetup(t)
	dir := t.TempDir()
	tok, err := gateway.AddToken(dir, "ci-bot", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	notes := make(chan string, 16)
	g, err := gateway.New(m, gateway.Options{Listen: "127.0.0.1:0", Token: testToken, TokensFile: gateway.TokensPath(dir),
		Log: func(s string) { notes <- s }})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	a, err := agentWithToken(t, g, tok, "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_, _ = a.CallTool(context.Background(), &mcp.CallToolParams{Name: "mail__send_email", Arguments: map[string]any{}})
		close(done)
	}()
	evs.Pending(t, 1)
	// Garbled: not the file airlock writes (written as another process might).
	if err := os.WriteFile(gateway.TokensPath(dir)+".new", []byte(`{"version":1,"tokens":[{"name":"ci-bot",`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(gateway.TokensPath(dir)+".new", gateway.TokensPath(dir)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the named token's waiting call did not end while its tokens file could not be read")
	}
	if n := len(mail.Calls("send_email")); n != 0 {
		t.Errorf("send_email ran %d times", n)
	}
	if _, err := agentWithToken(t, g, tok, "claude-code"); err == nil {
		t.Error("a named token connected while the tokens file could not be read")
	}
	if _, err := agentWithToken(t, g, testToken, "claude-code"); err != nil {
		t.Errorf("the default token was refused: %v", err)
	}
	var said bool
	for !said {
		select {
		case s := <-notes:
			said = strings.Contains(s, "named agent tokens are refused") && strings.Contains(s, "gateway-tokens.json")
		case <-time.After(10 * time.Second):
			t.Fatal("no notice said why named tokens are refused")
		}
	}
	// Adding to a file that cannot be read refuses, and leaves it as it is.
	if _, err := gateway.AddToken(dir, "another", time.Now()); err == nil {
		t.Error("a token was added over a tokens file that cannot be read")
	}
}

// A taint kept under a context named the old way (by client name, before named
// tokens) is the default token's agents' now: the gateway moves it there when it
// starts, audited, so upgrading airlock cleans no context.
func TestAgentIdentity_LegacyTaintMovesToTheDefaultToken(t *testing.T) {
	dir := t.TempDir()
	web, post, cfg := sessiontest.TaintSetup(dir)
	log, path := sessiontest.OpenAuditLog(t)
	m := sessiontest.StartUpstreams(t, cfg, session.Options{Audit: log}, map[string]*sessiontest.Upstream{"web": web, "post": post})
	const legacy = "agent-claude-code-3384771f"
	m.Engine().MarkTainted(legacy, trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch"}, At: time.Now(), CallID: "c-old"})
	g := startGateway(t, m)
	taints := m.Engine().Taints()
	if _, ok := taints[legacy]; ok || taints["token:default"].CallID != "c-old" {
		t.Fatalf("taints after the gateway started: %+v, want c-old's under token:default only", taints)
	}
	cs := agentNamed(t, g, "any-name")
	if res := callTool(t, cs, "post__post_msg"); !res.IsError {
		t.Errorf("the default token's exfiltration call ran unasked: %s", resultText(res))
	}
	var moved bool
	for _, r := range sessiontest.AuditRecords(t, path) {
		moved = moved || r.Kind == "taint-moved" && r.Context == legacy && strings.Contains(r.Reason, "token:default")
	}
	if !moved {
		t.Error("no taint-moved record names the old context and the new one")
	}
}
