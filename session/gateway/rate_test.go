package gateway_test

import (
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// An agent's 4th quick call of a tool the policy allows, with rate = "3/min", asks
// the person, naming the limit; the agent is told the person's no. The count is the
// agent token's: another token's calls run.
func TestRate_AgentFourthCallAsks(t *testing.T) {
	web := sessiontest.NewUpstream("web")
	web.Add("fetch_url", "Fetch a page.", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: sessiontest.Hint(false)})
	cfg := sessiontest.NewConfig(sessiontest.Inproc("web", trust.Trusted))
	cfg.Servers[0].Tools = map[string]config.Tool{"fetch_url": {Rate: &config.Rate{N: 3, Per: time.Minute, Action: trust.Ask}}}
	cfg.StateDir = t.TempDir()
	m := sessiontest.StartUpstreams(t, cfg, session.Options{}, map[string]*sessiontest.Upstream{"web": web})
	evs := sessiontest.CollectEvents(t, m)
	g := startGateway(t, m)
	a := mustAgentWithToken(t, g, namedToken(t, g, "ci-bot"), "claude-code")
	for i := range 3 {
		if res := callTool(t, a, "web__fetch_url"); res.IsError {
			t.Fatalf("call %d: %s", i+1, resultText(res))
		}
	}
	if n := evs.Count(sessiontest.IsApproval); n != 0 {
		t.Fatalf("%d questions for calls under the limit", n)
	}
	answerInBackground(t, m, evs, 1, model.Response{Answer: model.Deny})
	const fourth = "the 4th call of web__fetch_url this minute; limit 3/min"
	if res := callTool(t, a, "web__fetch_url"); !res.IsError {
		t.Fatalf("the 4th call ran: %s", resultText(res))
	}
	if p := evs.Pending(t, 1); p.Request.Context != "token:ci-bot" || p.Verdict.Reasons[0] != fourth {
		t.Errorf("the question of context %q says %q, want %q", p.Request.Context, p.Verdict.Reasons, fourth)
	}
	b := mustAgentWithToken(t, g, namedToken(t, g, "laptop"), "claude-code")
	if res := callTool(t, b, "web__fetch_url"); res.IsError {
		t.Errorf("another token's call: %s", resultText(res))
	}
	if n := len(web.Calls("fetch_url")); n != 4 {
		t.Errorf("fetch_url ran %d times, want 4", n)
	}
}
