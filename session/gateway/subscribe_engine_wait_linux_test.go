package gateway_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/trust"
)

// A taint being written waits for taint.json's lock while another airlock holds it,
// without the engine's lock: a subscription's turn, which looks at the context's
// taint, goes on meanwhile (and its token is looked at after that look, last).
func TestTaint_WriteWaitingForAnotherAirlockStallsNoSubscription(t *testing.T) {
	var mu sync.Mutex
	var got []string
	slow := make(chan struct{})
	// Untrusted: its resources channel is escalated by taint, so a subscription's
	// turn looks at the context's taint (taintedOutbound).
	f := lastLookSetupWith(t, true, lastLookOpts{untrusted: true, stateDir: true, server: &mcp.ServerOptions{
		SubscribeHandler: func(_ context.Context, r *mcp.SubscribeRequest) error {
			mu.Lock()
			got = append(got, r.Params.URI)
			mu.Unlock()
			if r.Params.URI == "notes://slow" {
				<-slow
			}
			return nil
		},
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	}})
	m, taintPath, agent := f.m, f.taint, f.agent
	watcher := mustAgentWithToken(t, f.g, f.watcher, "watcher")

	// 1. The watcher's subscription holds the server's subscription turn (subMu).
	go func() {
		_ = watcher.Subscribe(context.Background(), &mcp.SubscribeParams{URI: gateway.RelayURI("docs", "notes://slow")})
	}()
	sessiontest.WaitFor(t, "the watcher's subscription at the server", 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 1
	})
	// 2. The agent's subscription passes its first look and waits for its turn.
	done := make(chan error, 1)
	go func() {
		done <- agent.Subscribe(context.Background(), &mcp.SubscribeParams{URI: gateway.RelayURI("docs", "notes://a")})
	}()
	waitGoroutine(t, "(*Manager).subscription", "sync.(*Mutex).Lock")
	// 3. Another airlock writes taint.json; this airlock taints another context
	// meanwhile, and that write waits for the file's lock.
	releaseTaint := holdAuditLock(t, taintPath)
	marked := make(chan struct{})
	go func() {
		m.MarkTainted(gateway.AgentContext("someone-else"), trust.Taint{By: trust.Ref{Server: "docs", Tool: "get"}, At: time.Now(), Channel: trust.ChannelResult})
		close(marked)
	}()
	waitLockWaiter(t, taintPath+".lock")
	// 4. The turn comes, the taint is looked at, and the subscription is sent,
	// while the other airlock still holds taint.json's lock.
	slow <- struct{}{}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the agent's subscription: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the agent's subscription waited for another airlock's taint.json lock")
	}
	mu.Lock()
	if !slices.Contains(got, "notes://a") {
		t.Errorf("the server got %q, want notes://a too", got)
	}
	mu.Unlock()
	select {
	case <-marked:
		t.Error("the taint was written while another airlock held taint.json's lock")
	default:
	}
	releaseTaint()
	<-marked
	close(slow)
	if tt := m.Engine().Taint(gateway.AgentContext("someone-else")); !tt.Tainted() {
		t.Errorf("someone-else's taint after the lock was let go: %+v", tt)
	}
}
