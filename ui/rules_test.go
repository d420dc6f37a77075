package ui

// "Always allow…" from the dialog, through the
// real UI and a real session.Manager, persists in rules.toml, applies to the next
// call and after a restart; the Rules view lists it beside the config's rules with
// where each came from and how often it matched, and revoking it (a guarded
// question) makes the next call ask again.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/session/pins"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/internal/keytest"
	"github.com/airlock-mcp/airlock/ui/question"
)

// fsServer is a filesystem server whose write_file (a write tool: it asks) counts
// its calls.
func fsServer(writes *atomic.Int32) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "fs", Version: "1"}, nil)
	no := false
	type args struct {
		Path string `json:"path"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "write_file", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no}},
		func(context.Context, *mcp.CallToolRequest, args) (*mcp.CallToolResult, any, error) {
			writes.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "written"}}}, nil, nil
		})
	return s
}

// rulesConfig is the fs server, trusted, with one config rule: keys stay home.
func rulesConfig(t *testing.T) *config.Config {
	t.Helper()
	c, err := trust.NewCond("path", trust.MatchGlob, "**/.ssh/**", "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := trust.NewRule("servers.fs.tools.write_file.rules[0]", trust.Deny, "keys stay home", []trust.Cond{c})
	if err != nil {
		t.Fatal(err)
	}
	r.Source = "config.toml:7"
	return &config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute, Servers: []config.Server{
		{Name: "fs", Trust: trust.Trusted, ConnectTimeout: 10 * time.Second, CallTimeout: time.Minute,
			Tools: map[string]config.Tool{"write_file": {Rules: []trust.Rule{r}}}},
	}}
}

// startRulesManager starts a Manager over the fs server with rulesPath as its
// rules file.
func startRulesManager(t *testing.T, rulesPath string, writes *atomic.Int32) *session.Manager {
	t.Helper()
	pins, err := pins.Open("")
	if err != nil {
		t.Fatal(err)
	}
	return startWithOptions(t, rulesConfig(t), session.Options{InProcess: map[string]*mcp.Server{"fs": fsServer(writes)}, Pins: pins,
		RulesFile: rulesPath, Now: func() time.Time { return fixedNow }})
}

// bearerRT adds the gateway's bearer token to every request.
type bearerRT string

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// gatewayAgent starts airlock's agent gateway on sess (127.0.0.1) and connects a
// real go-sdk client to it, as an AI agent would.
func gatewayAgent(t *testing.T, sess *session.Manager) *mcp.ClientSession {
	t.Helper()
	const token = "rules2-test-token-0123456789abcdef"
	g, err := gateway.New(sess, gateway.Options{Listen: "127.0.0.1:0", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "gw-agent", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: g.URL(), HTTPClient: &http.Client{Transport: bearerRT(token)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// gatewayWrite is the agent's write_file through the gateway; a denial (a tool
// error) comes back as an error with its text.
func gatewayWrite(cs *mcp.ClientSession, path string) <-chan error {
	done := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fs__write_file", Arguments: map[string]any{"path": path}})
		if err == nil && res.IsError {
			var text []string
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					text = append(text, tc.Text)
				}
			}
			err = errors.New(strings.Join(text, " "))
		}
		done <- err
	}()
	return done
}

func writeCall(m *session.Manager, path string) <-chan error {
	b, _ := json.Marshal(map[string]string{"path": path})
	return agentCall(context.Background(), m, "fs__write_file", string(b))
}

func TestRules_DialogAlwaysAllowPersistsRestartRevokeAsks(t *testing.T) {
	rulesPath := filepath.Join(t.TempDir(), "rules.toml")
	var writes atomic.Int32
	sess := startRulesManager(t, rulesPath, &writes)
	h := newHarnessFor(t, sess, 80, 24, true, Options{})
	// The agent calls through the gateway, as a real one does.
	agent := gatewayAgent(t, sess)
	writeCall := func(m *session.Manager, path string) <-chan error {
		if m == sess {
			return gatewayWrite(agent, path)
		}
		return writeCall(m, path)
	}

	first := writeCall(sess, "/srv/project/a.txt")
	h.waitAsked(1)
	h.armQuestion()
	screenHas(t, h.plain(), "Always allow…", "Always deny…")
	// Keys before the dialog armed never reach the editor; after, no letter opens it.
	h.keys("y", "o", "A")
	stillPending(t, first, "letters on the dialog")
	if !h.m.q.Armed() {
		h.armQuestion()
	}
	h.keys("right", "right", "right", "enter")
	screenHas(t, h.plain(), "Always allow fs__write_file when (edit; enter saves):", `path = { glob = "/srv/project/*" }`)
	stillPending(t, first, "opening the rule editor")
	h.keys("enter")
	stillPending(t, first, "saving the rule before the chord")
	h.keys("ctrl+y")
	if err := outcome(t, first); err != nil {
		t.Fatalf("the call allowed with Always allow: %v", err)
	}
	screenHas(t, h.m.status, "✓ allowed · saving always-allow rule (K): fs__write_file when path glob /srv/project/*")
	list, err := approval.ListRules(rulesPath)
	if err != nil || len(list) != 1 || list[0].Policy != "allow" || list[0].When["path"]["glob"] != "/srv/project/*" {
		t.Fatalf("rules.toml holds %+v (%v)", list, err)
	}
	id := list[0].ID

	// The next call in the same directory runs unasked; another directory asks.
	if err := outcome(t, writeCall(sess, "/srv/project/b.txt")); err != nil {
		t.Fatalf("the remembered rule did not allow: %v", err)
	}
	if n := len(sess.Engine().Pending()); n != 0 {
		t.Fatalf("the remembered rule asked: %d pending", n)
	}
	other := writeCall(sess, "/srv/other/c.txt")
	h.waitAsked(1)
	h.armQuestion()
	h.keys("esc")
	if err := outcome(t, other); err == nil {
		t.Fatal("esc did not deny the call in another directory")
	}

	// A restart: a second airlock on the same rules file applies it.
	var writes2 atomic.Int32
	sess2 := startRulesManager(t, rulesPath, &writes2)
	if err := outcome(t, writeCall(sess2, "/srv/project/d.txt")); err != nil || writes2.Load() != 1 {
		t.Fatalf("after a restart: %v (writes %d)", err, writes2.Load())
	}

	// The Rules view: the config's rule and the remembered one, with source and count.
	h.keys("K")
	if h.m.screen != screenRules {
		t.Fatalf("K did not open the Rules view:\n%s", h.plain())
	}
	screenHas(t, h.plain(), "Rules · 2 rules · 1 remembered", "⊘ deny  fs__write_file · config config.toml:7",
		"when path glob **/.ssh/**", "keys stay home", "matched 0 calls this session",
		"✓ allow fs__write_file · remembered "+id, "when path glob /srv/project/*", "matched 1 call this session", "x revoke")
	// x on the config's rule revokes nothing and says where it lives.
	h.keys("x")
	screenHas(t, h.plain(), "edit config.toml:7 to change this rule")
	if h.m.q.Len() != 0 {
		t.Fatal("x on a config rule asked a question")
	}
	h.keys("j", "x")
	if !frontIs(h.m, question.KindChoice) {
		t.Fatalf("x on the remembered rule did not ask:\n%s", h.plain())
	}
	screenHas(t, h.plain(), "Revoke remembered rule "+id+"?", "Keep it", "Revoke")
	h.keys("tab", "enter") // before it armed: ignored
	if l, _ := approval.ListRules(rulesPath); len(l) != 1 {
		t.Fatal("keys before the question armed revoked the rule")
	}
	h.armQuestion()
	h.keys("y", "r", "enter") // no letter revokes; enter on "Keep it" keeps
	if l, _ := approval.ListRules(rulesPath); len(l) != 1 {
		t.Fatal("a letter or enter on Keep revoked the rule")
	}
	h.keys("x")
	h.armQuestion()
	h.keys("right", "enter")
	if l, _ := approval.ListRules(rulesPath); len(l) != 1 {
		t.Fatal("right, enter revoked the rule before the chord")
	}
	h.keys("ctrl+y")
	h.waitFor("the revoke", func(m Model) bool { return strings.Contains(m.status, "revoked rule") })
	if l, _ := approval.ListRules(rulesPath); len(l) != 0 {
		t.Fatalf("after the revoke rules.toml holds %+v", l)
	}
	screenHas(t, h.plain(), "Rules · 1 rule · 0 remembered")

	// Revoked: the next call in that directory asks again, in both processes.
	again := writeCall(sess, "/srv/project/e.txt")
	h.waitAsked(1)
	stillPending(t, again, "the call after the revoke")
	again2 := writeCall(sess2, "/srv/project/e.txt")
	deadline := time.Now().Add(10 * time.Second)
	for len(sess2.Engine().Pending()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the second airlock did not ask after the revoke")
		}
		time.Sleep(5 * time.Millisecond)
	}
	stillPending(t, again2, "the second airlock's call after the revoke")
	_ = sess2.Engine().Answer(sess2.Engine().Pending()[0].ID, model.Response{Answer: model.Deny})
	_ = sess.Engine().Answer(sess.Engine().Pending()[0].ID, model.Response{Answer: model.Deny})
	if err := outcome(t, again); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Errorf("the agent's denied call: %v", err)
	}
}

// The Rules view at 80x24 (golden) and every line within 60x20.
func TestRulesView_Golden(t *testing.T) {
	rulesPath := filepath.Join(t.TempDir(), "rules.toml")
	var writes atomic.Int32
	sess := startRulesManager(t, rulesPath, &writes)
	h := newHarnessFor(t, sess, 80, 24, false, Options{})
	h.keys("K")
	entries := []model.RuleEntry{
		{Name: "servers.fs.tools.write_file.rules[0]", Source: "config.toml:7", Server: "fs", Tool: "write_file",
			When: map[string]map[string]any{"path": {"glob": "**/.ssh/**"}}, Policy: trust.Deny, Reason: "keys stay home"},
		{Name: "servers.web.tools.fetch_url.rules[0]", Source: "config.toml:3", Server: "web", Tool: "fetch_url",
			When: map[string]map[string]any{"url": {"host": []any{"docs.python.org", "*.go.dev"}}}, Policy: trust.Allow, Reason: "documentation", Matched: 12},
		{Name: "r-1f2e3d4c", Source: "rules.toml", Remembered: true, Server: "fs", Tool: "write_file",
			When: map[string]map[string]any{"path": {"glob": "/home/ann/project/*"}}, Policy: trust.Allow, From: "the dialog, call c4 in context agent-claude-code-1a2b", Matched: 3},
		{Name: "r-9a8b7c6d", Source: "rules.toml", Remembered: true, Server: "mail", Tool: "send_email\x1b[2J",
			When: map[string]map[string]any{"to": {"equals": "eve@example.com"}}, Policy: trust.Deny, From: "the dialog, call c9 in context you"},
	}
	h.m.rules.SetData(entries, nil)
	golden(t, "rules_80x24.golden", h.plain())
	if strings.Contains(h.m.render(), "\x1b[2J") {
		t.Error("a hostile tool name reached the terminal raw")
	}
	for _, size := range [][2]int{{80, 24}, {60, 20}, {120, 40}} {
		h.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		keytest.Fits(t, h.m.render(), size[0], size[1], "the Rules view")
		for range 8 {
			h.keys("j")
			keytest.Fits(t, h.m.render(), size[0], size[1], "the Rules view, moved down")
		}
	}
	// K is in the help's global keys, and the Rules view has its own section.
	var global, section bool
	for _, sec := range h.m.helpSections() {
		section = section || sec.Title == "Rules (K)"
		if sec.Title == "Everywhere" {
			for _, group := range sec.Keys.FullHelp() {
				for _, b := range group {
					global = global || b.Help().Key == "K" && strings.HasPrefix(b.Help().Desc, "rules")
				}
			}
		}
	}
	if !global || !section {
		t.Errorf("help: K among the global keys %v, a Rules section %v", global, section)
	}
}

// A call a rule decided names the rule — in the status
// line, in Activity's list and in its full record — for a config rule and a
// remembered one, allow and deny alike.
func TestRules_StatusAndActivityNameTheRule(t *testing.T) {
	rulesPath := filepath.Join(t.TempDir(), "rules.toml")
	var writes atomic.Int32
	sess := startRulesManager(t, rulesPath, &writes)
	h := newHarnessFor(t, sess, 100, 30, true, Options{})
	tool, ok := sess.Snapshot().Tool("fs", "write_file")
	if !ok {
		t.Fatal("no write_file")
	}
	saved, err := sess.Engine().RememberRule(model.RuleProposal{Server: "fs", Tool: "write_file", When: map[string]map[string]any{"path": {"glob": "/srv/project/**"}}}, trust.Allow, tool, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := outcome(t, writeCall(sess, "/srv/project/a.txt")); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the allowed call", func(m Model) bool { return m.acts.Calls == 1 })
	screenHas(t, h.m.status, "fs__write_file allowed by rule "+saved.ID+" (rules.toml)")
	if err := outcome(t, writeCall(sess, "/home/ann/.ssh/authorized_keys")); err == nil {
		t.Fatal("the config's deny rule did not deny")
	}
	h.waitFor("the denied call", func(m Model) bool { return m.acts.Calls == 2 })
	screenHas(t, h.m.status, "fs__write_file denied by rule servers.fs.tools.write_file.rules[0] (config.toml:7)")
	h.keys("v")
	screenHas(t, h.plain(), "denied by rule servers.fs.tools.write_file.rules[0]", "allowed by rule "+saved.ID)
	h.keys("enter") // the newest: the denial
	screenHas(t, h.plain(), "denied by rule servers.fs.tools.write_file.rules[0] (config.toml:7)")
}

// o in the Rules view turns a rule off for this session (a what-if change,
// exported by E) and back on: while it is off it decides nothing. Turning a deny
// rule off loosens, so it asks first and only the chord turns it off (no letter,
// no enter on "Keep it on", not → enter alone); turning it back on is one key.
func TestRulesView_TurnRuleOffIsWhatIf(t *testing.T) {
	rulesPath := filepath.Join(t.TempDir(), "rules.toml")
	var writes atomic.Int32
	sess := startRulesManager(t, rulesPath, &writes)
	h := newHarnessFor(t, sess, 80, 24, true, Options{})
	h.keys("K", "o")
	if !frontIs(h.m, question.KindChoice) {
		t.Fatalf("o on the deny rule did not ask:\n%s", h.plain())
	}
	screenHas(t, h.plain(), "Turn deny rule servers.fs.tools.write_file.rules[0] off?", "Keep it on", "Turn it off", "may run unasked")
	h.keys("tab", "enter") // before it armed: ignored
	h.armQuestion()
	h.keys("o", "y", "t", "enter") // no letter turns it off; enter on "Keep it on" keeps
	screenHas(t, h.m.status, "kept rule servers.fs.tools.write_file.rules[0] on")
	h.keys("o")
	h.armQuestion()
	h.keys("right", "enter")
	if len(h.m.over.RulesOff) != 0 || len(sess.Overrides().RulesOff) != 0 {
		t.Fatal("right, enter turned the deny rule off before the chord")
	}
	h.keys("ctrl+y")
	h.waitFor("the rule turned off", func(m Model) bool { return len(m.over.RulesOff) == 1 && strings.HasPrefix(m.status, "what-if") })
	screenHas(t, h.plain(), "○ off   fs__write_file", "off for this session (o)")
	screenHas(t, h.m.status, "what-if: rule servers.fs.tools.write_file.rules[0] turned off for this session", "E exports")
	if !h.m.keys.Export.Enabled() {
		t.Error("E is off with a rule turned off")
	}
	// Off, the deny rule decides nothing: the write to .ssh asks.
	done := writeCall(sess, "/home/ann/.ssh/authorized_keys")
	h.waitAsked(1)
	stillPending(t, done, "the write with the deny rule off")
	_ = sess.Engine().Answer(sess.Engine().Pending()[0].ID, model.Response{Answer: model.Deny})
	_ = outcome(t, done)
	h.keys("o")
	h.waitFor("the rule back on", func(m Model) bool { return len(m.over.RulesOff) == 0 && strings.Contains(m.status, "turned back on") })
	if err := outcome(t, writeCall(sess, "/home/ann/.ssh/authorized_keys")); err == nil || !strings.Contains(err.Error(), "rule servers.fs.tools.write_file.rules[0]") {
		t.Errorf("back on, the deny rule does not deny: %v", err)
	}
}
