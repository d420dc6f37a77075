package session_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// nextCallFinished reads events until a CallFinished arrives.
func nextCallFinished(t *testing.T, m *session.Manager) model.CallFinished {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		e, ok := m.Next(ctx)
		if !ok {
			t.Fatal("no CallFinished event")
		}
		if cf, ok := e.(model.CallFinished); ok {
			return cf
		}
	}
}

// Every call through Manager.Call, an agent's auto-allowed one
// included, is published with who, tool, tier, decision, outcome and result.
func TestActivity_CallFinishedForAgentAndDeniedCalls(t *testing.T) {
	m, _ := sessiontest.DemoInProcess(t, session.Options{}, setTool("notes", "delete_note", config.Tool{Policy: trust.Deny}))
	_, err := m.Call(context.Background(), model.CallRequest{Context: "agent-1", Client: "claude-code", Server: "notes", Tool: "list_notes"})
	if err != nil {
		t.Fatal(err)
	}
	cf := nextCallFinished(t, m)
	if cf.Client != "claude-code" || cf.Context != "agent-1" || cf.Server != "notes" || cf.Tool != "list_notes" {
		t.Errorf("who/what = %+v", cf)
	}
	if cf.Decision != "allow" || cf.DecidedBy != string(trust.DecidedByPolicy) || cf.Outcome != "ok" || cf.Tier != "read" {
		t.Errorf("decision %q by %q outcome %q tier %q", cf.Decision, cf.DecidedBy, cf.Outcome, cf.Tier)
	}
	if cf.Result == nil || !strings.Contains(sessiontest.TextOf(cf.Result), "note-") || cf.CallID == "" || string(cf.Args) != "{}" {
		t.Errorf("result/call id/args missing: %+v", cf)
	}

	_, err = m.Call(context.Background(), model.CallRequest{Server: "notes", Tool: "delete_note", Args: sessiontest.Args(`{"id":"note-1"}`)})
	sessiontest.Denied(t, err)
	cf = nextCallFinished(t, m)
	if cf.Decision != "deny" || cf.Outcome != "denied" || cf.Result != nil || cf.Err == "" || string(cf.Args) != `{"id":"note-1"}` {
		t.Errorf("denied call = %+v", cf)
	}

	_, err = m.Call(context.Background(), model.CallRequest{Server: "notes", Tool: "no_such_tool"})
	if err == nil {
		t.Fatal("unknown tool called")
	}
	if cf = nextCallFinished(t, m); cf.Outcome != "failed" || cf.Decision != "" {
		t.Errorf("unknown tool = %+v", cf)
	}
}
