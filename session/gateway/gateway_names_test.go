package gateway_test

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// servedPattern is what every agent client accepts as a tool name (Claude Code,
// Gemini CLI and Codex each rewrite or cut anything else).
var servedPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// testServerInProcess is a configured server that Options.InProcess plays.
func testServerInProcess(name string, tr trust.ServerTrust) config.Server {
	return config.Server{Name: name, Trust: tr}
}

// listedNames is every tool name an agent is served, sorted.
func listedNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var out []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tool.Name)
	}
	sort.Strings(out)
	return out
}

// The gateway serves every tool under a name that matches ^[A-Za-z0-9_-]{1,64}$ and
// fits the name budget (44 bytes by default), and each served name reaches its own
// tool: a 128-byte name, a dotted name, get.item beside get-item and get_item, and a
// tool named like get.item's mapped form.
func TestGatewayServesNamesClientsAccept(t *testing.T) {
	cfg := sessiontest.NewConfig(testServerInProcess("notes", trust.Trusted))
	m := sessiontest.Start(t, cfg, session.Options{InProcess: map[string]*mcp.Server{"notes": sessiontest.NamesServer(sessiontest.HostileNames())}})
	g := startGateway(t, m)
	cs := agent(t, g, nil)
	names := listedNames(t, cs)
	if len(names) != len(sessiontest.HostileNames()) {
		t.Fatalf("the gateway serves %d tools %q, want %d", len(names), names, len(sessiontest.HostileNames()))
	}
	for _, n := range names {
		if !servedPattern.MatchString(n) || len(n) > trust.DefaultNameBudget {
			t.Errorf("served name %q (%d bytes) does not match %s within %d bytes", n, len(n), servedPattern, trust.DefaultNameBudget)
		}
	}
	reached := map[string]string{}
	for _, n := range names {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: n, Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("calling %s: %v %s", n, err, sessiontest.TextOf(res))
		}
		tool := strings.TrimPrefix(sessiontest.TextOf(res), "reached ")
		if prev, ok := reached[tool]; ok {
			t.Errorf("%s and %s both reach %s", prev, n, tool)
		}
		reached[tool] = n
	}
	// Every served name is what the snapshot says, and reaches that tool.
	snap := m.Snapshot()
	for _, want := range sessiontest.HostileNames() {
		ti, ok := snap.Tool("notes", want)
		if !ok {
			t.Fatalf("no tool %s", want)
		}
		served, ok := snap.ServedName(&ti)
		if !ok || reached[want] != served {
			t.Errorf("%s: the snapshot serves it as %q (%v), the call reached it by %q", want, served, ok, reached[want])
		}
	}
	// Names that fit are served as they are; the others are mapped.
	for _, asIs := range []string{"notes__get-item", "notes__get_item", "notes__" + sessiontest.HostileNames()[4]} {
		if reached[strings.TrimPrefix(asIs, "notes__")] != asIs {
			t.Errorf("%s is served as %q, want it as it is", asIs, reached[strings.TrimPrefix(asIs, "notes__")])
		}
	}
	if got := reached["get.item"]; !strings.HasPrefix(got, "notes__get_item_") || got == "notes__"+sessiontest.HostileNames()[4] {
		t.Errorf("get.item is served as %q, want notes__get_item_ and a hash other than the literal tool's", got)
	}
}

// The original names (longer than the budget, or dotted) are not served: an agent
// that calls one gets an error, as for any unknown tool, and the audit says which
// name the gateway serves the tool under. A call by the mapped name is audited with
// both names, and the question a person answers carries the served name.
func TestGatewayRefusesUnmappedNames(t *testing.T) {
	a, path := sessiontest.OpenAuditLog(t)
	cfg := sessiontest.NewConfig(testServerInProcess("notes", trust.Trusted))
	cfg.Servers[0].Tools = map[string]config.Tool{"get.item": {Policy: trust.Ask}}
	m := sessiontest.Start(t, cfg, session.Options{Audit: a, InProcess: map[string]*mcp.Server{"notes": sessiontest.NamesServer(sessiontest.HostileNames())}})
	ans := sessiontest.AnswerWith(t, m, model.Response{Answer: model.AllowOnce})
	g := startGateway(t, m)
	cs := agent(t, g, nil)
	for _, n := range []string{"notes__get.item", "notes__" + sessiontest.Long128} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: n, Arguments: map[string]any{}})
		if err == nil && !res.IsError {
			t.Errorf("calling the unmapped name %s reached a tool: %s", n, sessiontest.TextOf(res))
		}
	}
	ti := sessiontest.MustTool(t, m, "notes", "get.item")
	served, _ := m.Snapshot().ServedName(&ti)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: served, Arguments: map[string]any{}})
	if err != nil || res.IsError || sessiontest.TextOf(res) != "reached get.item" {
		t.Fatalf("calling %s: %v %s", served, err, sessiontest.TextOf(res))
	}
	if p := <-ans.Seen; p.Request.Served != served || p.Tool.Ref.Tool != "get.item" {
		t.Errorf("the question is about %v called as %q, want get.item called as %q", p.Tool.Ref, p.Request.Served, served)
	}
	a.Close()
	var refused, decided, outcome int
	for _, r := range sessiontest.AuditRecords(t, path) {
		switch {
		case r.Kind == "decision" && r.DecidedBy == string(trust.DecidedByUnknownTool) && r.Tool == "notes__get.item":
			refused++
			if want := `(it serves that tool as "` + served + `")`; !strings.Contains(r.Reason, want) {
				t.Errorf("refusal reason %q does not say %s", r.Reason, want)
			}
		case r.Tool == "get.item" && r.Served == served && r.Server == "notes":
			if r.Kind == "decision" {
				decided++
			} else if r.Kind == "outcome" {
				outcome++
			}
		}
	}
	if refused != 1 || decided != 1 || outcome != 1 {
		t.Errorf("audit holds %d refusals of the dotted name, %d decisions and %d outcomes with tool get.item served %q; want one each", refused, decided, outcome, served)
	}
}

// Prompts are mapped as tools are: a 128-byte prompt name is served within the
// budget, and a get by that name reaches the prompt.
func TestGatewayServesPromptNamesClientsAccept(t *testing.T) {
	s := sessiontest.NamesServer(nil)
	for _, n := range []string{sessiontest.Long128, "sum.up", "sum_up"} {
		s.AddPrompt(&mcp.Prompt{Name: n}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "prompt " + n}}}}, nil
		})
	}
	cfg := sessiontest.NewConfig(testServerInProcess("notes", trust.Trusted))
	m := sessiontest.Start(t, cfg, session.Options{InProcess: map[string]*mcp.Server{"notes": s}})
	g := startGateway(t, m)
	cs := agent(t, g, nil)
	res, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	reached := map[string]bool{}
	for _, p := range res.Prompts {
		if !servedPattern.MatchString(p.Name) || len(p.Name) > trust.DefaultNameBudget {
			t.Errorf("served prompt name %q (%d bytes) is not one clients accept", p.Name, len(p.Name))
		}
		got, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: p.Name})
		if err != nil {
			t.Fatalf("getting %s: %v", p.Name, err)
		}
		text := got.Messages[0].Content.(*mcp.TextContent).Text
		reached[text] = true
		if want, _ := m.Snapshot().ServedPromptName("notes", strings.TrimPrefix(text, "prompt ")); want != p.Name {
			t.Errorf("%s reached %q, which the snapshot serves as %q", p.Name, text, want)
		}
	}
	if len(reached) != 3 {
		t.Errorf("the served prompts reach %v, want all three", reached)
	}
}

// The mapping is the same in a second run: a new Manager and gateway over a new
// server process list the same names.
func TestGatewayNamesStableAcrossRestarts(t *testing.T) {
	run := func() []string {
		m := session.New(sessiontest.NewConfig(sessiontest.TestServer(t, "notes", "names", trust.Trusted)), session.Options{})
		defer m.Close()
		m.Start()
		if err := m.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		g := startGateway(t, m)
		defer g.Close()
		cs := agent(t, g, nil)
		defer cs.Close()
		return listedNames(t, cs)
	}
	first, second := run(), run()
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("served names differ between two runs (-first +second):\n%s", diff)
	}
	if len(first) != len(sessiontest.HostileNames()) {
		t.Errorf("served %q, want %d names", first, len(sessiontest.HostileNames()))
	}
}
