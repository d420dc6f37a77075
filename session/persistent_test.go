package session_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
)

// TestTaintAsksBeforeAPersistentWrite: with the npm memory server labelled
// persistent, a write the person granted for the context runs unasked while the
// context is clean; once untrusted content was read in it, the same write asks,
// grant or not, and the question names the taint and the persistent store.
func TestTaintAsksBeforeAPersistentWrite(t *testing.T) {
	mem := sessiontest.NPMServer(t, "memory", "mcp-server-memory", trust.Trusted)
	mem.Env = map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}
	mem.Labels = []trust.Leg{trust.LegPersistent}
	m := sessiontest.Start(t, sessiontest.NewConfig(mem), session.Options{})
	sessiontest.MustServer(t, m, "memory", model.StatusReady)
	a := sessiontest.AnswerWith(t, m,
		model.Response{Answer: model.AllowOnce},
		model.Response{Answer: model.AllowForContext},
		model.Response{Answer: model.Deny})
	ctx := context.Background()
	const agent = "agent-1"
	call := func(tool, args string) (*session.Outcome, error) {
		return m.Call(ctx, model.CallRequest{Context: agent, Server: "memory", Tool: tool, Args: sessiontest.Args(args)})
	}
	if _, err := call("create_entities", `{"entities":[{"name":"a","entityType":"t","observations":["x"]}]}`); err != nil {
		t.Fatal(err)
	}
	<-a.Seen // write tier: asked, allowed once
	if _, err := call("add_observations", `{"observations":[{"entityName":"a","contents":["y"]}]}`); err != nil {
		t.Fatal(err)
	}
	<-a.Seen // asked, allowed for the context
	out, err := call("add_observations", `{"observations":[{"entityName":"a","contents":["z"]}]}`)
	if err != nil || out.Verdict.By != trust.DecidedByGrant {
		t.Fatalf("clean context: verdict %+v, err %v; want the grant to allow", out, err)
	}
	sessiontest.NoAsk(t, a)

	m.Engine().MarkTainted(agent, trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch_url"}, CallID: "c-1"})
	_, err = call("add_observations", `{"observations":[{"entityName":"a","contents":["injected"]}]}`)
	var p *model.Pending
	select {
	case p = <-a.Seen:
	default:
		t.Fatalf("tainted context: add_observations ran without asking (err %v)", err)
	}
	sessiontest.Denied(t, err)
	why := strings.Join(p.Verdict.Reasons, "\n")
	for _, want := range []string{"web__fetch_url returned untrusted content", "writes to a persistent store"} {
		if !strings.Contains(why, want) {
			t.Errorf("the question's reasons do not say %q:\n%s", want, why)
		}
	}
	// A read of the store is no write: it runs as before.
	if _, err := call("read_graph", `{}`); err != nil {
		t.Errorf("read_graph in the tainted context: %v", err)
	}
	sessiontest.NoAsk(t, a)
}
