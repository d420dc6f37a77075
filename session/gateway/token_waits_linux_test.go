package gateway_test

// The waits a request can meet after its token was looked at: nothing waits for
// another airlock with the engine's lock held (a taint written while another holds
// taint.json's lock), a completion is looked at after its body is read, and a
// revoke that waits for a session's handler to end has ended the name's grants
// already.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/trust"
)

// A taint being written waits for taint.json's lock while another airlock holds
// it, and never with the engine's lock held, which every decision takes: calls are
// decided and forwarded meanwhile, and the taint counts in memory at once.
func TestTaint_WriteWaitingForAnotherAirlockStallsNoCall(t *testing.T) {
	f := lastLookSetupWith(t, true, lastLookOpts{stateDir: true})
	m, taintPath := f.m, f.taint
	if err := f.do("tool call"); err != nil {
		t.Fatalf("the first call: %v", err)
	}
	release := holdAuditLock(t, taintPath) // another airlock writing taint.json
	marked := make(chan struct{})
	watcher := gateway.AgentContext("watcher")
	go func() {
		m.MarkTainted(watcher, trust.Taint{By: trust.Ref{Server: "docs", Tool: "get"}, At: time.Now(), Channel: trust.ChannelResult})
		close(marked)
	}()
	waitLockWaiter(t, taintPath+".lock")
	looked := make(chan trust.Taint, 1)
	go func() { looked <- m.Engine().Taint(watcher) }()
	select {
	case tt := <-looked:
		if !tt.Tainted() {
			t.Errorf("the watcher's context while its taint waits to be written: %+v, want tainted", tt)
		}
	case <-time.After(10 * time.Second):
		release() // let the engine go, so that the test ends
		t.Fatal("a look at a context's taint waited for another airlock's taint.json lock")
	}
	done := make(chan error, 1)
	go func() { done <- f.do("tool call") }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("a call while a taint waits to be written: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a call waited for another airlock's taint.json lock")
	}
	if n := f.ran.Load(); n != 2 {
		t.Errorf("the server ran %d calls, want 2", n)
	}
	// The token's last look still stops a call whose token was revoked.
	f.revoke(t)
	if err := f.do("tool call"); err == nil {
		t.Error("a call after its token was revoked was answered")
	}
	release()
	<-marked
	b, err := os.ReadFile(taintPath)
	if err != nil || !strings.Contains(string(b), watcher) {
		t.Errorf("taint.json after the lock was let go: %s, %v; want the watcher's taint", b, err)
	}
}

// The person's clear of a taint and the move of one context's taint to another
// wait for taint.json's lock like a taint's write does: never with the engine's
// lock held. Calls are decided and forwarded meanwhile; the taint being cleared
// still counts until its clear is written, and the clear and the move are in the
// file once the lock is let go.
func TestTaint_ClearOrMoveWaitingForAnotherAirlockStallsNoCall(t *testing.T) {
	f := lastLookSetupWith(t, true, lastLookOpts{stateDir: true})
	m, taintPath := f.m, f.taint
	if err := f.do("tool call"); err != nil {
		t.Fatalf("the first call: %v", err)
	}
	cleared, from, to := gateway.AgentContext("cleared"), gateway.AgentContext("from"), gateway.AgentContext("to")
	for _, c := range []string{cleared, from} {
		m.MarkTainted(c, trust.Taint{By: trust.Ref{Server: "docs", Tool: "get"}, At: time.Now(), Channel: trust.ChannelResult})
	}
	for _, step := range []struct {
		name string
		run  func() error
	}{
		{"clear", func() error { return m.Engine().ClearTaint(cleared) }},
		{"move", func() error {
			_, err := m.MoveTaints(to, func(c string) bool { return c == from })
			return err
		}},
	} {
		release := holdAuditLock(t, taintPath) // another airlock writing taint.json
		ended := make(chan error, 1)
		go func() { ended <- step.run() }()
		waitLockWaiter(t, taintPath+".lock")
		looked := make(chan trust.Taint, 1)
		go func() { looked <- m.Engine().Taint(cleared) }()
		select {
		case tt := <-looked:
			if step.name == "clear" && !tt.Tainted() {
				t.Errorf("%s: the context's taint before its clear is written: %+v, want tainted", step.name, tt)
			}
		case <-time.After(10 * time.Second):
			release() // let the engine go, so that the test ends
			t.Fatalf("%s: a look at a context's taint waited for another airlock's taint.json lock", step.name)
		}
		done := make(chan error, 1)
		go func() { done <- f.do("tool call") }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: a call while it waits: %v", step.name, err)
			}
		case <-time.After(10 * time.Second):
			release()
			t.Fatalf("%s: a call waited for another airlock's taint.json lock", step.name)
		}
		release()
		if err := <-ended; err != nil {
			t.Fatalf("%s once the lock was let go: %v", step.name, err)
		}
	}
	b, err := os.ReadFile(taintPath)
	if err != nil || strings.Contains(string(b), `"`+cleared+`"`) || strings.Contains(string(b), `"`+from+`"`) || !strings.Contains(string(b), `"`+to+`"`) {
		t.Errorf("taint.json after the clear and the move: %s, %v; want %s's taint only", b, err, to)
	}
	if tt := m.Engine().Taint(cleared); tt.Tainted() {
		t.Errorf("the cleared context is still tainted: %+v", tt)
	}
	if n := f.ran.Load(); n != 3 {
		t.Errorf("the server ran %d calls, want 3", n)
	}
}

// A completion whose headers were authenticated before a revoke and whose body came
// after it is not sent upstream: the binding's look at a named token reads the
// tokens file as last read, and the completion is looked at once more just before
// it is sent.
func TestAgentIdentity_CompletionBodyAfterRevokeNotSent(t *testing.T) {
	for _, named := range []bool{true, false} {
		t.Run(fmt.Sprintf("named %v", named), func(t *testing.T) {
			var completions atomic.Int32
			f := lastLookSetupWith(t, named, lastLookOpts{server: &mcp.ServerOptions{
				CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
					completions.Add(1)
					return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"x"}}}, nil
				},
			}, stateDir: true})
			ref := &mcp.CompleteReference{Type: "ref/prompt", Name: "docs__early"}
			sessiontest.WaitFor(t, "docs__early served", 10*time.Second, func() bool {
				_, err := f.agent.Complete(context.Background(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "topic", Value: "a"}})
				return err == nil
			})
			before := completions.Load()
			body := `{"jsonrpc":"2.0","id":4242,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"docs__early"},"argument":{"name":"topic","value":"secret-typed-so-far"}}}`
			u, _ := url.Parse(f.g.URL())
			c, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			head := "POST /mcp HTTP/1.1\r\nHost: " + u.Host + "\r\nAuthorization: Bearer " + f.tok +
				"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream" +
				"\r\nMcp-Session-Id: " + f.agent.ID() + "\r\nMcp-Protocol-Version: " + f.agent.InitializeResult().ProtocolVersion +
				"\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
			if _, err := c.Write([]byte(head + body[:10])); err != nil {
				t.Fatal(err)
			}
			waitGoroutine(t, "gateway.readBody") // authenticated; its body is being read
			f.revoke(t)
			if _, err := c.Write([]byte(body[10:])); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			answer := ""
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				answer = resp.Status + " " + string(b)
			}
			if n := completions.Load() - before; n != 0 {
				t.Errorf("the server was sent %d completion(s) after the token was revoked; the agent got %q", n, answer)
			}
		})
	}
}

// A session's Close waits for its handlers; a handler of a revoked value that waits
// for the audit log (another airlock appending) must not keep the name's grants
// alive: the same name added again meanwhile does not call on the old grant.
func TestAgentIdentity_StalledRevokeLoopReaddedTokenCallsOnOldGrant(t *testing.T) {
	f := ciBotSetup(t, "thief")
	mail, m, evs, g, dir := f.mail, f.m, f.evs, f.g, f.dir
	answerInBackground(t, m, evs, 1, model.Response{Answer: model.AllowForContext})
	if res := callTool(t, f.a, "mail__send_email"); res.IsError {
		t.Fatalf("allowed for the context: %s", resultText(res))
	}
	waitHeadSynced(t, f.audit)
	release := holdAuditLock(t, f.audit)
	// The old value's next call (on its grant) waits for its decision's record.
	go func() {
		_, _ = f.a.CallTool(context.Background(), &mcp.CallToolParams{Name: "mail__send_email", Arguments: map[string]any{"x": "old"}})
	}()
	waitLockWaiter(t, f.audit+".lock")
	if err := gateway.RevokeToken(dir, "ci-bot"); err != nil {
		t.Fatal(err)
	}
	newTok, err := gateway.AddToken(dir, "ci-bot", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The revoke loop found the old value's session, whose handler still waits:
	// its grant ends all the same.
	sessiontest.WaitFor(t, "the old value's grant ended", 10*time.Second, func() bool { return len(m.Engine().Grants()) == 0 })
	b := mustAgentWithToken(t, g, newTok, "ci")
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := b.CallTool(context.Background(), &mcp.CallToolParams{Name: "mail__send_email", Arguments: map[string]any{"x": "new"}})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true}
		}
		done <- res
	}()
	// The new value's call is decided (on the grant: nobody is asked) and waits
	// for its record, or it waits for a person.
	deadline := time.Now().Add(10 * time.Second)
	for countGoroutines("(*Manager).auditDecision") < 2 && !waitingAny(m) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for _, p := range m.Engine().Pending() {
		_ = m.Engine().Answer(p.ID, model.Response{Answer: model.Deny, Reason: "asked, as it should"})
	}
	release()
	res := <-done
	if !res.IsError {
		t.Errorf("the re-added token's call ran unasked on the revoked value's grant: %s", resultText(res))
	}
	if n := len(mail.Calls("send_email")); n != 1 {
		t.Errorf("send_email ran %d times, want 1 (the grant's own call): %v", n, mail.Calls("send_email"))
	}
}

func waitingAny(m *session.Manager) bool { return len(m.Engine().Pending()) > 0 }

// countGoroutines is how many goroutines' stacks hold part.
func countGoroutines(part string) int {
	buf := make([]byte, 1<<22)
	n := runtime.Stack(buf, true)
	c := 0
	for g := range strings.SplitSeq(string(buf[:n]), "\n\n") {
		if strings.Contains(g, part) {
			c++
		}
	}
	return c
}
