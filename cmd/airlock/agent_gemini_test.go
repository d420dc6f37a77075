//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/agentmodel"
	"github.com/airlock-mcp/airlock/session/audit"
)

// The real Gemini CLI (testdata/agents, pinned) through airlock's gateway, end to
// end: the airlock TUI runs in a pseudo-terminal on real stdio servers, Gemini is
// registered with `airlock gateway snippet gemini`, and `gemini -p` talks to a
// scripted model on 127.0.0.1 (GOOGLE_GEMINI_BASE_URL), never to the network.
//
// Gemini runs with its default approval mode. The snippet's "trust": true on the
// airlock entry is what lets Gemini run airlock's tools without asking itself (and,
// with -p, offer them at all), so that airlock is the one who asks.

// geminiBinDir is testdata/agents/node_modules/.bin, holding gemini and the Node 22
// it runs on; the test skips when the agent CLIs are not installed, and fails when
// CI is set.
func geminiBinDir(t *testing.T) string {
	t.Helper()
	return agentBinDir(t, "the agent CLIs are not installed", "gemini", "node")
}

// geminiAgent is one Gemini CLI user: a fresh HOME with its settings, a project
// folder to run in, and the scripted model it talks to.
type geminiAgent struct {
	t     *testing.T
	bin   string
	home  string
	proj  string
	model *agentmodel.GeminiModel

	mu     sync.Mutex
	script agentmodel.GeminiScript
}

func newGeminiAgent(t *testing.T) *geminiAgent {
	t.Helper()
	g := &geminiAgent{t: t, bin: geminiBinDir(t), home: t.TempDir(), proj: t.TempDir(), script: agentmodel.GeminiSteps()}
	m, err := agentmodel.NewGeminiModel(func(r agentmodel.GeminiRequest) agentmodel.GeminiReply {
		g.mu.Lock()
		s := g.script
		g.mu.Unlock()
		return s(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	g.model = m
	g.settings(nil)
	return g
}

// settings writes ~/.gemini/settings.json: API key auth, nothing that phones home
// (telemetry, usage statistics, update checks), and mcpServers when not nil.
func (g *geminiAgent) settings(mcpServers any) {
	g.t.Helper()
	s := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
	}
	if mcpServers != nil {
		s["mcpServers"] = mcpServers
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	if err := os.MkdirAll(filepath.Join(g.home, ".gemini"), 0o700); err != nil {
		g.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g.home, ".gemini", "settings.json"), b, 0o600); err != nil {
		g.t.Fatal(err)
	}
}

// trustFolder records the project folder as trusted, as Gemini's trust dialog does.
func (g *geminiAgent) trustFolder() {
	g.t.Helper()
	b, _ := json.Marshal(map[string]string{g.proj: "TRUST_FOLDER"})
	if err := os.WriteFile(filepath.Join(g.home, ".gemini", "trustedFolders.json"), b, 0o600); err != nil {
		g.t.Fatal(err)
	}
}

func (g *geminiAgent) setScript(s agentmodel.GeminiScript) {
	g.mu.Lock()
	g.script = s
	g.mu.Unlock()
	g.model.Reset()
}

// command is gemini with args in the project folder, with only the environment it
// needs (none of the developer's own GEMINI_* or proxy settings) plus extra.
func (g *geminiAgent) command(ctx context.Context, extra []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(g.bin, "gemini"), args...)
	cmd.Dir = g.proj
	cmd.Env = append([]string{
		"PATH=" + g.bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + g.home,
		"TMPDIR=" + os.TempDir(),
		"GEMINI_API_KEY=dummy",
		"GOOGLE_GEMINI_BASE_URL=" + g.model.URL,
		"NO_COLOR=1",
		// Gemini relaunches itself in a second node process only to raise its heap
		// limit; one process starts in half the time, and a kill reaches it alone.
		"GEMINI_CLI_NO_RELAUNCH=true",
	}, extra...)
	if dir := geminiCompileCache(); dir != "" {
		// Node keeps the bundle's compiled code (96 MB of JavaScript) here, so
		// that every run after the first starts faster.
		cmd.Env = append(cmd.Env, "NODE_COMPILE_CACHE="+dir)
	}
	// A process group all the same, so that a kill reaches anything it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// geminiCompileCache is a folder for Node's compile cache, kept between test runs
// (like Go's build cache, under the user's cache dir), or "" when there is none.
var geminiCompileCache = sync.OnceValue(func() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	dir = filepath.Join(dir, "airlock-tests", "node-compile-cache")
	if os.MkdirAll(dir, 0o700) != nil {
		return ""
	}
	return dir
})

type geminiResult struct {
	out  string // stdout and stderr
	code int
}

// run runs gemini to its end (a 3-minute guard against a hang, not a timing). It
// may run on a goroutine of its own: a failure to run is an error of g.t.
func (g *geminiAgent) run(extra []string, args ...string) geminiResult {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := g.command(ctx, extra, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	code, err := runCode(cmd)
	if err != nil {
		g.t.Errorf("gemini %v: %v", args, err) // Errorf: run may be on its own goroutine
	}
	if ctx.Err() != nil {
		g.t.Errorf("gemini %v did not end within 3 minutes:\n%s", args, out.String())
	}
	return geminiResult{out.String(), code}
}

// prompt runs `gemini -p text` with the script and returns its result and the
// conversation the model saw.
func (g *geminiAgent) prompt(script agentmodel.GeminiScript, text string) (geminiResult, []agentmodel.GeminiRequest) {
	g.t.Helper()
	g.setScript(script)
	r := g.run(nil, "-p", text)
	g.checkRequests(r)
	return r, g.model.Conversation()
}

// startPrompt runs `gemini -p text` with the script on a goroutine of its own,
// for a test that answers its question on the screen meanwhile.
func (g *geminiAgent) startPrompt(script agentmodel.GeminiScript, text string) <-chan geminiResult {
	g.setScript(script)
	done := make(chan geminiResult, 1)
	go func() { done <- g.run(nil, "-p", text) }()
	return done
}

// end waits for a started run (3 minutes at most, else the test fails saying
// notEnded) and checks its requests.
func (g *geminiAgent) end(t *testing.T, run <-chan geminiResult, notEnded string) geminiResult {
	t.Helper()
	var r geminiResult
	select {
	case r = <-run:
	case <-time.After(3 * time.Minute):
		t.Fatal(notEnded)
	}
	g.checkRequests(r)
	return r
}

// checkRequests fails the test when the CLI asked the model for something it does
// not serve, or a utility call's answer did not satisfy the CLI.
func (g *geminiAgent) checkRequests(r geminiResult) {
	for _, req := range g.model.Requests() {
		if req.Method == "unknown" {
			g.t.Errorf("gemini asked the scripted model for %s", req.Path)
		}
	}
	if strings.Contains(r.out, "[Routing]") && strings.Contains(r.out, "failed") {
		g.t.Errorf("gemini's router did not take the scripted model's answer:\n%s", r.out)
	}
}

// geminiResponse is the first function response named tool that reached the model.
func geminiResponse(conv []agentmodel.GeminiRequest, tool string) (agentmodel.GeminiFunctionResponse, bool) {
	for _, r := range conv {
		for _, fr := range r.Responses {
			if fr.Name == tool {
				return fr, true
			}
		}
	}
	return agentmodel.GeminiFunctionResponse{}, false
}

// geminiCall is a scripted step calling airlock's tool (Gemini names it
// mcp_airlock_TOOL).
func geminiCall(tool string, args map[string]any) agentmodel.GeminiReply {
	return agentmodel.GeminiReply{Call: &agentmodel.GeminiFunctionCall{Name: "mcp_airlock_" + tool, Args: args}}
}

// geminiSnippet runs `airlock gateway snippet gemini` (with --env when env) for the
// config and returns its comment lines and its JSON block.
func geminiSnippet(t *testing.T, state, cfg string, env bool) (string, map[string]any) {
	t.Helper()
	args := []string{"gateway", "snippet", "gemini", "--config", cfg}
	if env {
		args = append(args, "--env")
	}
	r := airlockIn(t, state, "", args...)
	if r.code != 0 {
		t.Fatalf("airlock %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
	}
	var comments, js strings.Builder
	inBlock := false
	for _, l := range strings.Split(r.stdout, "\n") {
		switch {
		case l == "{":
			inBlock = true
		case !inBlock && strings.HasPrefix(l, "#"):
			comments.WriteString(l + "\n")
		}
		if inBlock {
			js.WriteString(l + "\n")
		}
		if l == "}" {
			inBlock = false
		}
	}
	var block map[string]any
	if err := json.Unmarshal([]byte(js.String()), &block); err != nil {
		t.Fatalf("the snippet's block is not JSON (%v):\n%s", err, r.stdout)
	}
	return comments.String(), block
}

// geminiConfig is an airlock config on the demo servers as real stdio subprocesses:
// notes (private data, delete_note destructive), mail (trusted, its send_email
// labelled exfiltration and allowed, so only taint makes it ask) and web (fetch_url
// returns untrusted content: it taints).
func geminiConfig(t *testing.T) string {
	return writeConfig(t, demoServerTOML("notes", "trusted", `labels = ["private-data"]`)+"\n"+
		demoServerTOML("mail", "trusted", `labels = ["exfiltration"]`)+
		"\n[servers.mail.tools.send_email]\npolicy = \"allow\"\n\n"+demoServerTOML("web", "trusted"))
}

// geminiAirlock starts the airlock TUI on the config with its gateway on a free
// port, and waits for its servers.
func geminiAirlock(t *testing.T, cfg string) *screen {
	t.Helper()
	s := startScreen(t, "--config", cfg, "--gateway", freeAddr(t))
	s.waitFor("3/3 ready")
	return s
}

// startGemini is how each Gemini test starts: a Gemini user, the airlock TUI on
// geminiConfig, and the snippet airlock prints for Gemini (with --env when env):
// its comment lines and its JSON block.
func startGemini(t *testing.T, env bool) (g *geminiAgent, s *screen, comments string, block map[string]any) {
	t.Helper()
	g = newGeminiAgent(t)
	cfg := geminiConfig(t)
	s = geminiAirlock(t, cfg)
	comments, block = geminiSnippet(t, s.state, cfg, env)
	return g, s, comments, block
}

// geminiListed is gemini mcp list's line for airlock.
func geminiListed(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "airlock:") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// The report: Gemini CLI connects to no MCP server in a folder it does not trust,
// and with -p (its default approval mode) offers the model no tool of a server it
// does not trust. Both are why the snippet says what it says.
func TestGeminiCLI_ConnectsOnlyWithTrustedFolderAndServer(t *testing.T) {
	t.Parallel() // each Gemini run is mostly Node starting: the three overlap
	g, _, comments, block := startGemini(t, false)
	for _, want := range []string{"~/.gemini/settings.json", "a folder it trusts", "trustedFolders.json", "--skip-trust", `"trust": true`, "timeout", "approval_timeout"} {
		if !strings.Contains(comments, want) {
			t.Errorf("the snippet's comments do not say %q:\n%s", want, comments)
		}
	}
	entry, _ := block["mcpServers"].(map[string]any)["airlock"].(map[string]any)
	if entry["trust"] != true || entry["timeout"] != float64(600000) || !strings.HasPrefix(fmt.Sprint(entry["httpUrl"]), "http://127.0.0.1:") {
		t.Fatalf("the snippet's airlock entry: %v", entry)
	}
	g.settings(block["mcpServers"])

	// 1. The snippet as it is, in a folder Gemini was never told to trust.
	r := g.run(nil, "mcp", "list")
	t.Logf("untrusted folder: gemini mcp list: %s", geminiListed(r.out))
	if !strings.Contains(geminiListed(r.out), "Disabled") || !strings.Contains(r.out, "this folder is untrusted") {
		t.Errorf("in an untrusted folder airlock was not disabled: exit %d\n%s", r.code, r.out)
	}
	r, _ = g.prompt(agentmodel.GeminiSteps(geminiCall("notes__list_notes", nil)), "list my notes")
	t.Logf("untrusted folder: gemini -p exits %d", r.code)
	if r.code != 55 || !strings.Contains(r.out, "not running in a trusted directory") {
		t.Errorf("gemini -p in an untrusted folder: exit %d, want 55 (untrusted workspace)\n%s", r.code, r.out)
	}
	if n := len(g.model.Requests()); n != 0 {
		t.Errorf("gemini -p in an untrusted folder reached the model %d times", n)
	}

	// 2. The folder trusted, the server entry without "trust": connected, but -p
	// offers none of airlock's tools (each would need Gemini's own confirmation,
	// which -p cannot ask for), so the model's call is "not found".
	g.trustFolder()
	untrusted := map[string]any{}
	for k, v := range entry {
		if k != "trust" {
			untrusted[k] = v
		}
	}
	g.settings(map[string]any{"airlock": untrusted})
	r = g.run(nil, "mcp", "list")
	t.Logf("trusted folder, untrusted server: gemini mcp list: %s", geminiListed(r.out))
	if !strings.Contains(geminiListed(r.out), "Connected") {
		t.Errorf("in a trusted folder airlock did not connect: exit %d\n%s", r.code, r.out)
	}
	r, conv := g.prompt(agentmodel.GeminiSteps(geminiCall("notes__list_notes", nil)), "list my notes")
	if len(conv) == 0 {
		t.Fatalf("gemini -p never reached the model: exit %d\n%s", r.code, r.out)
	}
	if conv[0].Offers("mcp_airlock_notes__list_notes") {
		t.Errorf("without the server's trust Gemini -p still offered airlock's tools: %v", conv[0].Declarations)
	}
	fr, ok := geminiResponse(conv, "mcp_airlock_notes__list_notes")
	t.Logf("trusted folder, untrusted server: %d tools offered, none of airlock's; the call got %q", len(conv[0].Declarations), fr.Text())
	if !ok || !strings.Contains(fr.Text(), "not found") {
		t.Errorf("the call to an airlock tool that was not offered got %q", fr.Text())
	}
	// With the snippet's entry as it is, TestGeminiCLI_CallsThroughAirlock runs them.
}

// The snippet's --env block: Gemini expands ${AIRLOCK_TOKEN} in settings.json, so the
// block connects with the token in the environment and without it does not.
func TestGeminiCLI_EnvSnippetReadsTheTokenFromTheEnvironment(t *testing.T) {
	t.Parallel() // each Gemini run is mostly Node starting: the three overlap
	g, s, _, block := startGemini(t, true)
	entry, _ := block["mcpServers"].(map[string]any)["airlock"].(map[string]any)
	if h, _ := entry["headers"].(map[string]any); h["Authorization"] != "Bearer ${AIRLOCK_TOKEN}" {
		t.Fatalf("the --env block's header: %v", entry["headers"])
	}
	g.settings(block["mcpServers"])
	g.trustFolder()
	tok, err := os.ReadFile(filepath.Join(s.state, "airlock", "gateway.token"))
	if err != nil {
		t.Fatal(err)
	}
	var with, without geminiResult
	var wg sync.WaitGroup
	wg.Go(func() { with = g.run([]string{"AIRLOCK_TOKEN=" + strings.TrimSpace(string(tok))}, "mcp", "list") })
	wg.Go(func() { without = g.run(nil, "mcp", "list") })
	wg.Wait()
	t.Logf("--env block: with AIRLOCK_TOKEN %q; without %q", geminiListed(with.out), geminiListed(without.out))
	if !strings.Contains(geminiListed(with.out), "Connected") {
		t.Errorf("with AIRLOCK_TOKEN set the --env block did not connect:\n%s", with.out)
	}
	if strings.Contains(geminiListed(without.out), "Connected") {
		t.Errorf("without AIRLOCK_TOKEN the --env block connected (the header is not what authenticates?):\n%s", without.out)
	}
}

// geminiAuditCalls is the audit records of one tool, as kind:decision:decided_by,
// with the person's reasons.
func geminiAuditCalls(t *testing.T, state, tool string) (kinds []string, reasons []string) {
	t.Helper()
	for _, r := range auditRecords(t, filepath.Join(state, "airlock", "audit.jsonl"), func(r audit.Record) bool { return r.Server+"__"+r.Tool == tool }) {
		kinds = append(kinds, r.Kind+":"+r.Decision+r.Outcome+":"+r.DecidedBy)
		if r.PersonReason != "" {
			reasons = append(reasons, r.PersonReason)
		}
	}
	return kinds, reasons
}

// answerAllow allows the question on screen (allowDestructive) and waits for the
// dialog to close.
func (s *screen) answerAllow() {
	s.t.Helper()
	s.allowDestructive()
	s.waitGone("allow this call?", "Tools · ")
}

// Gemini CLI's calls through airlock: a read runs unasked; a destructive call asks
// in the TUI and runs when allowed by keys, and is denied with a typed reason that
// reaches the model; taint makes a send ask; a killed Gemini's question is
// withdrawn and its call never runs.
func TestGeminiCLI_CallsThroughAirlock(t *testing.T) {
	t.Parallel() // each Gemini run is mostly Node starting: the three overlap
	g, s, _, block := startGemini(t, false)
	g.settings(block["mcpServers"])
	g.trustFolder()

	r := g.run(nil, "mcp", "list")
	t.Logf("gemini mcp list: %s", geminiListed(r.out))
	if !strings.Contains(geminiListed(r.out), "✓ airlock") || !strings.Contains(geminiListed(r.out), "Connected") {
		t.Fatalf("gemini mcp list does not show airlock connected: exit %d\n%s", r.code, r.out)
	}

	// run is t.Run with the screen reporting to the subtest.
	run := func(name string, f func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			s.t = t
			defer func() { s.t = g.t }()
			f(t)
		})
	}

	run("read and clean send run unasked", func(t *testing.T) {
		start := time.Now()
		r, conv := g.prompt(agentmodel.GeminiSteps(
			geminiCall("notes__list_notes", nil),
			geminiCall("mail__send_email", map[string]any{"to": "ann@example.com", "subject": "hi", "body": "lunch?"}),
			agentmodel.GeminiReply{Text: "listed and sent"},
		), "list my notes, then mail Ann")
		fr, ok := geminiResponse(conv, "mcp_airlock_notes__list_notes")
		if !ok || !strings.Contains(fr.Text(), "note-2: Home Wi-Fi") {
			t.Fatalf("list_notes' result did not reach the model (exit %d): %q\n%s", r.code, fr.Text(), r.out)
		}
		sent, ok := geminiResponse(conv, "mcp_airlock_mail__send_email")
		if !ok || strings.Contains(sent.Text(), "denied") {
			t.Errorf("the send in a clean context did not run: %q", sent.Text())
		}
		if strings.Contains(s.text(), "allow this call?") {
			t.Errorf("a read or a clean send asked:\n%s", s.text())
		}
		if r.code != 0 || !strings.Contains(r.out, "listed and sent") {
			t.Errorf("gemini -p: exit %d\n%s", r.code, r.out)
		}
		t.Logf("gemini -p with 2 calls, unasked: %v, %d model requests; list_notes returned %d bytes", time.Since(start).Round(100*time.Millisecond), len(conv), len(fr.Text()))
	})

	run("destructive call asks, allowed by keys", func(t *testing.T) {
		started := g.startPrompt(agentmodel.GeminiSteps(
			geminiCall("notes__delete_note", map[string]any{"id": "note-1"}),
			geminiCall("notes__list_notes", nil),
			agentmodel.GeminiReply{Text: "deleted"},
		), "delete my groceries note")
		s.waitFor("allow this call?")
		s.waitFor("delete_note")
		s.answerAllow()
		r := g.end(t, started, "gemini did not end after the call was allowed")
		conv := g.model.Conversation()
		del, _ := geminiResponse(conv, "mcp_airlock_notes__delete_note")
		list, _ := geminiResponse(conv, "mcp_airlock_notes__list_notes")
		t.Logf("allowed: delete_note returned %q", del.Text())
		if strings.Contains(del.Text(), "denied") || list.Text() == "" || strings.Contains(list.Text(), "note-1:") {
			t.Errorf("the allowed delete did not run: delete %q, then list %q\n%s", del.Text(), list.Text(), r.out)
		}
		kinds, _ := geminiAuditCalls(t, s.state, "notes__delete_note")
		if len(kinds) < 2 || kinds[0] != "decision:allow:person" || kinds[1] != "outcome:ok:" {
			t.Errorf("audit of the allowed delete: %v", kinds)
		}
	})

	run("destructive call denied with a typed reason", func(t *testing.T) {
		started := g.startPrompt(agentmodel.GeminiSteps(
			geminiCall("notes__delete_note", map[string]any{"id": "note-2"}),
			agentmodel.GeminiReply{Text: "not deleted"},
		), "delete my wifi note")
		s.denyWithReason("keep the wifi note")
		r := g.end(t, started, "gemini did not end after the call was denied")
		del, _ := geminiResponse(g.model.Conversation(), "mcp_airlock_notes__delete_note")
		t.Logf("denied: the model got %q", del.Text())
		if !strings.Contains(del.Text(), "keep the wifi note") || !strings.Contains(del.Text(), "denied") {
			t.Errorf("the typed reason did not reach the model: %q\n%s", del.Text(), r.out)
		}
		_, reasons := geminiAuditCalls(t, s.state, "notes__delete_note")
		if len(reasons) != 1 || reasons[0] != "keep the wifi note" {
			t.Errorf("audited reasons %q", reasons)
		}
	})

	run("killed gemini's question is withdrawn", func(t *testing.T) {
		g.setScript(agentmodel.GeminiSteps(
			geminiCall("notes__delete_note", map[string]any{"id": "note-3"}),
			agentmodel.GeminiReply{Text: "deleted"},
		))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cmd := g.command(ctx, nil, "-p", "delete my demo day note")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s.waitFor("allow this call?")
		s.waitFor("delete_note")
		killed := time.Now()
		cancel() // SIGKILL to gemini's process group
		_ = cmd.Wait()
		s.waitFor("the agent disconnected")
		if strings.Contains(s.text(), "allow this call?") {
			t.Errorf("the question still shows after gemini was killed:\n%s", s.text())
		}
		t.Logf("killed: the TUI said the agent disconnected %v after the kill", time.Since(killed).Round(10*time.Millisecond))
		deadline := time.Now().Add(10 * time.Second)
		var kinds []string
		for time.Now().Before(deadline) {
			kinds, _ = geminiAuditCalls(t, s.state, "notes__delete_note")
			if strings.Contains(strings.Join(kinds, " "), "agent-gone") {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != "decision:deny:agent-gone" {
			t.Errorf("audit of the killed agent's call: %v, want it to end decision:deny:agent-gone", kinds)
		}
		cs := connectAgent(t, s, strings.TrimSuffix(strings.TrimPrefix(fmt.Sprint(g.entryURL(block)), "http://"), "/mcp"))
		if !strings.Contains(notesText(t, cs), "note-3") {
			t.Error("note-3 was deleted: the killed agent's call ran")
		}
	})

	run("gemini's timeout withdraws its question", func(t *testing.T) {
		// The entry's timeout cut to 4 s for this run: Gemini gives up on the call
		// while it waits for a person, and the question must not outlive it.
		short := map[string]any{}
		for k, v := range block["mcpServers"].(map[string]any)["airlock"].(map[string]any) {
			short[k] = v
		}
		short["timeout"] = 4000
		g.settings(map[string]any{"airlock": short})
		defer g.settings(block["mcpServers"])
		started := g.startPrompt(agentmodel.GeminiSteps(
			geminiCall("notes__delete_note", map[string]any{"id": "note-3"}),
			agentmodel.GeminiReply{Text: "gave up"},
		), "delete my demo day note")
		s.waitFor("allow this call?")
		g.end(t, started, "gemini did not give up on the call")
		del, _ := geminiResponse(g.model.Conversation(), "mcp_airlock_notes__delete_note")
		t.Logf("gemini's timeout: the model got %q", del.Text())
		s.waitGone("allow this call?", "Tools · ")
		kinds, _ := geminiAuditCalls(t, s.state, "notes__delete_note")
		if len(kinds) == 0 || kinds[len(kinds)-1] != "decision:deny:agent-cancelled" {
			t.Errorf("audit of the call Gemini gave up on: %v, want it to end decision:deny:agent-cancelled", kinds)
		}
	})

	run("taint makes a send ask", func(t *testing.T) {
		started := g.startPrompt(agentmodel.GeminiSteps(
			geminiCall("web__fetch_url", map[string]any{"url": "https://blog.example.com/mcp-tips"}),
			geminiCall("mail__send_email", map[string]any{"to": "ann@example.com", "subject": "tips", "body": "see the blog"}),
			agentmodel.GeminiReply{Text: "sent"},
		), "read the blog and mail it to Ann")
		s.waitFor("allow this call?")
		s.waitFor("send_email")
		s.waitFor("tainted")
		s.waitGone("arming", "allow this call?")
		s.keys(keyEsc) // deny
		r := g.end(t, started, "gemini did not end after the send was denied")
		conv := g.model.Conversation()
		fetched, _ := geminiResponse(conv, "mcp_airlock_web__fetch_url")
		sent, _ := geminiResponse(conv, "mcp_airlock_mail__send_email")
		t.Logf("tainted: fetch_url returned %d bytes; the send got %q", len(fetched.Text()), sent.Text())
		if fetched.Text() == "" || !strings.Contains(sent.Text(), "denied") {
			t.Errorf("after the fetch the send was not asked and denied: %q\n%s", sent.Text(), r.out)
		}
		kinds, _ := geminiAuditCalls(t, s.state, "mail__send_email")
		if len(kinds) == 0 || kinds[len(kinds)-1] != "decision:deny:taint-asked-then-person" {
			t.Errorf("audit of the tainted send: %v", kinds)
		}
	})
}

// entryURL is the airlock entry's httpUrl in a snippet block.
func (g *geminiAgent) entryURL(block map[string]any) string {
	entry, _ := block["mcpServers"].(map[string]any)["airlock"].(map[string]any)
	return fmt.Sprint(entry["httpUrl"])
}
