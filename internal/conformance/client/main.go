// Command client is the adapter the MCP conformance suite
// (@modelcontextprotocol/conformance, its "client" command) runs as the client under
// test. It is not a user command: it drives airlock's own session layer — a
// session.Manager on a config holding one server at the URL the suite passes as the
// last argument — through the scenario named in MCP_CONFORMANCE_SCENARIO, so the
// suite's checks judge airlock's transports, handshake, elicitation routing and
// OAuth, not a separate client.
//
// Every call goes through the Manager's approval engine like any other; the adapter
// is the person at the keyboard and allows each one, and answers each elicitation by
// accepting the schema's defaults.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/oauth"
	"github.com/airlock-mcp/airlock/trust"
)

// serverName is the one server's name in the adapter's config.
const serverName = "conformance"

func main() {
	log.SetFlags(0)
	log.SetPrefix("airlock-conformance: ")
	if len(os.Args) < 2 {
		log.Fatal("usage: client URL (MCP_CONFORMANCE_SCENARIO names the scenario)")
	}
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var suiteCtx map[string]any
	if s := os.Getenv("MCP_CONFORMANCE_CONTEXT"); s != "" {
		if err := json.Unmarshal([]byte(s), &suiteCtx); err != nil {
			log.Fatalf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, scenario, url, os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"), suiteCtx); err != nil {
		log.Fatalf("scenario %s: %v", scenario, err)
	}
}

// run connects to url and plays scenario.
func run(ctx context.Context, scenario, url, protocol string, suiteCtx map[string]any) error {
	state, err := os.MkdirTemp("", "airlock-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)

	srv := config.Server{
		Name:           serverName,
		Transport:      config.TransportHTTP,
		URL:            url,
		Protocol:       protocol,
		ConnectTimeout: 20 * time.Second,
		CallTimeout:    20 * time.Second,
		Trust:          trust.Untrusted,
	}
	if strings.HasPrefix(scenario, "auth/") {
		srv.OAuth = oauthConfig(suiteCtx)
	}
	cfg := config.Default()
	cfg.StateDir = state
	cfg.Servers = []config.Server{srv}
	if err := cfg.Validate(); err != nil {
		return err
	}
	m := session.New(cfg, session.Options{
		ClientName: "airlock-conformance",
		Approver: model.ApproverFunc(func(_ context.Context, p *model.Pending) (model.Response, error) {
			log.Printf("allowing %s (tier %s)", p.Tool.Ref.Qualified(), p.Tool.Class.Tier)
			return model.Response{Answer: model.AllowOnce}, nil
		}),
		// The suite's authorization server redirects at once, so the "browser" is a
		// plain GET that follows the redirect to airlock's loopback listener.
		OAuth: oauth.Options{OpenBrowser: headlessBrowser},
	})
	defer m.Close()
	go answerElicitations(ctx, m)
	m.Start()
	if err := m.Wait(ctx); err != nil {
		return err
	}
	snap := m.Snapshot()
	info, _ := snap.Server(serverName)
	if info.Status != model.StatusReady {
		return fmt.Errorf("server not ready: %v", info.Err)
	}
	log.Printf("connected (protocol %s), %d tools", info.Protocol, info.Tiers[0]+info.Tiers[1]+info.Tiers[2]+info.Tiers[3])

	call := func(tool string, args any) error {
		b, err := json.Marshal(args)
		if err != nil {
			return err
		}
		out, err := m.Call(ctx, model.CallRequest{Server: serverName, Tool: tool, Args: b})
		if err != nil {
			return fmt.Errorf("calling %s: %w", tool, err)
		}
		if out.Result.IsError {
			log.Printf("%s returned isError", tool)
		}
		return nil
	}
	switch scenario {
	case "initialize", "request-metadata":
		return nil // connecting and listing tools is the scenario
	case "tools_call":
		return call("add_numbers", map[string]any{"a": 5, "b": 3})
	case "sse-retry":
		return call("test_reconnection", map[string]any{})
	case "elicitation-sep1034-client-defaults":
		return call("test_client_elicitation_defaults", map[string]any{})
	case "json-schema-2020-12-preservation":
		// airlock keeps every tool's schema as the bytes it received; echo them back
		// so the suite sees which keywords survived.
		t, ok := snap.Tool(serverName, "json_schema_2020_12_tool")
		if !ok {
			return errors.New("tool json_schema_2020_12_tool not listed")
		}
		return call("json_schema_echo", map[string]any{"schema": t.InputSchema})
	}
	if strings.HasPrefix(scenario, "auth/") {
		return call("test-tool", map[string]any{})
	}
	return fmt.Errorf("unknown scenario %q", scenario)
}

// answerElicitations accepts every elicitation and logs the server's log lines.
func answerElicitations(ctx context.Context, m *session.Manager) {
	for {
		ev, ok := m.Next(ctx)
		if !ok {
			return
		}
		switch e := ev.(type) {
		case model.ElicitationRequested:
			// Accept without filling anything in, as a person who keeps every
			// default: go-sdk applies the schema's defaults to the answer (SEP-1034).
			log.Printf("accepting elicitation %d with the defaults", e.Elicitation.ID)
			if err := m.AnswerElicitation(e.Elicitation.ID, "accept", map[string]any{}); err != nil {
				log.Printf("answering elicitation: %v", err)
			}
		case model.LogLine:
			log.Printf("[%s] %s", e.Source, e.Text)
		}
	}
}

// headlessBrowser plays the person's browser: it loads the authorization URL and
// follows the authorization server's redirect to airlock's loopback listener.
func headlessBrowser(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// oauthConfig is the [servers.conformance.oauth] table for an auth scenario: the
// suite's pre-registered client when it gives one, and a client ID metadata document
// URL for the scenarios whose authorization server supports them.
func oauthConfig(suiteCtx map[string]any) *config.OAuth {
	o := &config.OAuth{ClientMetadataURL: "https://conformance-test.local/client-metadata.json"}
	if id, ok := suiteCtx["client_id"].(string); ok {
		o.ClientID = id
		o.ClientSecret, _ = suiteCtx["client_secret"].(string)
	}
	return o
}
