package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/demo"
)

// A Manager connects to the configured servers, classifies every tool and decides
// every call: a read of a trusted server runs, a call that asks waits for the
// Approver (here one that says no), and the denial is the call's error.
func ExampleManager() {
	cfg := demo.Config()
	// Two of the demo's servers, in-process: docs (trusted, reads) and mail
	// (untrusted: it claims send_email is read-only, and airlock does not believe it).
	cfg.Servers = slices.DeleteFunc(cfg.Servers, func(s config.Server) bool {
		return s.Name != "docs" && s.Name != "mail"
	})
	inProcess := map[string]*mcp.Server{}
	for _, s := range cfg.Servers {
		srv, err := demo.New(s.Name)
		if err != nil {
			panic(err)
		}
		inProcess[s.Name] = srv
	}
	m := session.New(cfg, session.Options{
		InProcess: inProcess,
		Approver: model.ApproverFunc(func(ctx context.Context, p *model.Pending) (model.Response, error) {
			fmt.Printf("asks: %s %s (%s)\n", p.Request.Server, p.Request.Tool, p.Tier)
			return model.Response{Answer: model.Deny, Reason: "not today"}, nil
		}),
	})
	defer m.Close()
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		panic(err)
	}

	for _, t := range m.Snapshot().Tools {
		fmt.Printf("%s %s: %s\n", t.Ref.Server, t.Ref.Tool, t.Class.Tier)
	}

	out, err := m.Call(ctx, model.CallRequest{Server: "docs", Tool: "search_docs",
		Args: json.RawMessage(`{"query":"trifecta"}`)})
	if err != nil {
		panic(err)
	}
	fmt.Println("search_docs ran:", out.Verdict.Action, "by", out.Verdict.By)

	_, err = m.Call(ctx, model.CallRequest{Server: "mail", Tool: "send_email",
		Args: json.RawMessage(`{"to":"a@example.com","subject":"hi","body":"x"}`)})
	var denied *model.DeniedError
	fmt.Println("send_email denied:", errors.As(err, &denied))
	fmt.Println(err)
	// Output:
	// docs get_doc: read
	// docs search_docs: read
	// mail send_email: destructive
	// search_docs ran: allow by policy
	// asks: mail send_email (destructive)
	// send_email denied: true
	// call denied by the person at airlock: not today
}
