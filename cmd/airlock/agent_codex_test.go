//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/agentmodel"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/demo"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/cli"
)

// codexCLI returns Node 22 and the entry script of the pinned Codex CLI
// (testdata/agents), or skips, printing why, when they are not installed (fails in
// CI, where .ci/run installs them).
func codexCLI(t *testing.T) (node, script string) {
	t.Helper()
	bin := agentBinDir(t, "the pinned Codex CLI is not installed", "node", "codex")
	return filepath.Join(bin, "node"), filepath.Join(bin, "codex")
}

// agentBinDir is testdata/agents/node_modules/.bin, where `npm ci` installs the
// pinned agent CLIs and the Node 22 they run on. When one of bins is missing the
// test skips, saying missing and why (it fails instead when CI is set).
func agentBinDir(t *testing.T, missing string, bins ...string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "agents", "node_modules", ".bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bin := range bins {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			msg := fmt.Sprintf("%s (%v): run (cd testdata/agents && npm ci)", missing, err)
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return dir
}

// codexRig is one airlock TUI in a pseudo-terminal with its gateway, three demo
// servers as real stdio subprocesses, a scripted model endpoint, and a fresh
// CODEX_HOME whose config.toml points Codex at that endpoint only.
type codexRig struct {
	t            *testing.T
	node, script string
	s            *screen
	cfg          string // airlock's config
	stateDir     string // airlock's state dir (token, audit log, taint)
	model        *agentmodel.OpenAIServer
	home         string // CODEX_HOME
	work         string // Codex's working folder
	token        string // AIRLOCK_TOKEN, as the snippet's eval line sets it
	addr         string // the gateway's host:port
	notes        string // the notes server's NOTES_DIR
}

// codexAirlockConfig is airlock's config for these tests: notes (a read tool and a
// destructive one; each note a file in NOTES_DIR, so a test sees whether a call
// ran), web (its pages are untrusted content) and mail, whose send_email is a read
// that runs unasked unless taint makes it ask (it can carry data out).
var codexAirlockConfig = `state_dir = %q

[policy]
read = "allow"
write = "ask"
destructive = "ask"
approval_timeout = "2m"

[gateway]
listen = %q

` + demoServerTOML("notes", "trusted", `labels = ["private-data"]`, `env = { NOTES_DIR = %q }`) + "\n" +
	demoServerTOML("web", "trusted") + "\n" + demoServerTOML("mail", "trusted") + `
[servers.mail.tools.send_email]
labels = ["exfiltration"]
`

// codexModelConfig is the start of CODEX_HOME/config.toml: the scripted endpoint as
// the only model provider (key from SCRIPTED_API_KEY, a dummy), no update check, no
// analytics, feedback or telemetry.
const codexModelConfig = `model = "scripted"
model_provider = "scripted"
check_for_update_on_startup = false

[model_providers.scripted]
name = "scripted"
base_url = %q
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[features]
plugins = false
remote_plugin = false
apps = false
daemon_auto_start = false

`

// startCodexRig starts the TUI on codexAirlockConfig and the model endpoint; Codex's
// config is written by the test (useSnippet, or by hand).
func startCodexRig(t *testing.T) *codexRig {
	t.Helper()
	node, script := codexCLI(t)
	r := &codexRig{t: t, node: node, script: script, home: t.TempDir(), work: t.TempDir()}
	dir := t.TempDir()
	r.stateDir, r.notes, r.addr = filepath.Join(dir, "airlock"), filepath.Join(dir, "notes"), freeAddr(t)
	r.cfg = writeConfig(t, fmt.Sprintf(codexAirlockConfig, r.stateDir, r.addr, r.notes))
	r.s = startScreen(t, "--config", r.cfg)
	r.s.waitFor("3/3 ready")
	r.model = agentmodel.NewOpenAI()
	t.Cleanup(r.model.Close)
	return r
}

// airlock runs an airlock command beside the TUI (same state) and returns its
// stdout; a non-zero exit fails the test.
func (r *codexRig) airlock(args ...string) string {
	r.t.Helper()
	res := airlockIn(r.t, r.s.state, "", args...)
	if res.code != 0 {
		r.t.Fatalf("airlock %v: exit %d\n%s%s", args, res.code, res.stdout, res.stderr)
	}
	return res.stdout
}

// writeCodexConfig writes CODEX_HOME/config.toml: the model provider, then mcp.
func (r *codexRig) writeCodexConfig(mcp string) {
	r.t.Helper()
	body := fmt.Sprintf(codexModelConfig, r.model.URL) + mcp
	if err := os.WriteFile(filepath.Join(r.home, "config.toml"), []byte(body), 0o600); err != nil {
		r.t.Fatal(err)
	}
}

// useSnippet registers airlock in Codex as a person would: the output of `airlock
// gateway snippet codex` appended to config.toml, and AIRLOCK_TOKEN set by running
// the eval line the snippet names in a shell (with this test binary as airlock on
// PATH). It returns the snippet.
func (r *codexRig) useSnippet() string {
	r.t.Helper()
	snip := r.airlock("gateway", "snippet", "codex", "--config", r.cfg)
	r.writeCodexConfig(snip)
	var eval string
	for _, l := range strings.Split(snip, "\n") {
		if e, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(l, "#")), "eval "); ok {
			eval = "eval " + e
		}
	}
	if eval == "" {
		r.t.Fatalf("the snippet names no eval line:\n%s", snip)
	}
	bin := r.t.TempDir()
	if err := os.Symlink(selfPath(r.t), filepath.Join(bin, "airlock")); err != nil {
		r.t.Fatal(err)
	}
	sh := exec.Command("sh", "-c", eval+` && printf %s "$AIRLOCK_TOKEN"`)
	sh.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "AIRLOCK_AS_MAIN=1",
		"XDG_STATE_HOME="+r.s.state, "XDG_CONFIG_HOME="+filepath.Join(r.s.state, "none"))
	out, err := sh.Output()
	if err != nil || len(out) < 32 {
		r.t.Fatalf("%s: %v %q", eval, err, out)
	}
	r.token = string(out)
	if strings.Contains(snip, r.token) {
		r.t.Errorf("the Codex snippet shows the token:\n%s", snip)
	}
	return snip
}

// codexCmd is the pinned Codex CLI with args, in the rig's folders and environment,
// in a process group of its own (so that killing it kills whatever it started).
func (r *codexRig) codexCmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, r.node, append([]string{r.script}, args...)...)
	cmd.Dir = r.work
	cmd.Env = append(os.Environ(), "CODEX_HOME="+r.home, "HOME="+r.home, "SCRIPTED_API_KEY=dummy-key", "NO_COLOR=1")
	if r.token != "" {
		cmd.Env = append(cmd.Env, "AIRLOCK_TOKEN="+r.token)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// codex runs a Codex command that is not exec (mcp list, mcp add) and returns its
// stdout; a non-zero exit fails the test.
func (r *codexRig) codex(args ...string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := r.codexCmd(ctx, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		r.t.Fatalf("codex %v: %v\n%s%s", args, err, out.String(), errb.String())
	}
	return out.String()
}

// codexEvent is one line of `codex exec --json`; for an mcp_tool_call item, Result
// and Error say how the call ended for Codex.
type codexEvent struct {
	Type string `json:"type"`
	Item struct {
		Type   string `json:"type"`
		Server string `json:"server"`
		Tool   string `json:"tool"`
		Status string `json:"status"`
		Text   string `json:"text"`
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	} `json:"item"`
}

// codexRun is one `codex exec` under way.
type codexRun struct {
	t         *testing.T
	cmd       *exec.Cmd
	cancel    context.CancelFunc
	out, errb bytes.Buffer
	done      chan error
	started   time.Time
}

// start runs `codex exec --json prompt` (its config checked strictly: a key this
// Codex does not know fails the run) with extra flags before the prompt.
func (r *codexRig) start(prompt string, extra ...string) *codexRun {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	args := append([]string{"exec", "--strict-config", "--skip-git-repo-check", "--ephemeral", "--json"}, extra...)
	run := &codexRun{t: r.t, cmd: r.codexCmd(ctx, append(args, prompt)...), cancel: cancel, done: make(chan error, 1)}
	run.cmd.Stdout, run.cmd.Stderr = &run.out, &run.errb
	run.cmd.Stdin = strings.NewReader("")
	run.started = time.Now()
	if err := run.cmd.Start(); err != nil {
		cancel()
		r.t.Fatal(err)
	}
	go func() { run.done <- run.cmd.Wait() }()
	r.t.Cleanup(func() { cancel(); <-run.done })
	return run
}

// end waits for the run to end and returns how it exited.
func (run *codexRun) end() error {
	err := <-run.done
	run.done <- err // for the cleanup
	return err
}

// wait waits for the run to end (it must exit 0) and returns its events.
func (run *codexRun) wait() []codexEvent {
	run.t.Helper()
	if err := run.end(); err != nil {
		run.t.Fatalf("codex exec: %v (after %v)\n%s%s", err, time.Since(run.started).Round(time.Millisecond), run.out.String(), run.errb.String())
	}
	run.t.Logf("codex exec took %v", time.Since(run.started).Round(time.Millisecond))
	return run.events()
}

// events are the lines of the run's output.
func (run *codexRun) events() []codexEvent {
	var evs []codexEvent
	sc := bufio.NewScanner(bytes.NewReader(run.out.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev codexEvent
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type != "" {
			evs = append(evs, ev)
		}
	}
	return evs
}

// kill kills the run's whole process group, as a person closing its terminal.
func (run *codexRun) kill() {
	run.t.Helper()
	if err := syscall.Kill(-run.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		run.t.Fatal(err)
	}
	_ = run.end()
}

// exec runs `codex exec` to its end and returns its events.
func (r *codexRig) exec(prompt string, extra ...string) []codexEvent {
	r.t.Helper()
	return r.start(prompt, extra...).wait()
}

// codexToolCall is how Codex reports the call of airlock's tool: the completed
// mcp_tool_call item.
func codexToolCall(t *testing.T, evs []codexEvent, tool string) codexEvent {
	t.Helper()
	for _, ev := range evs {
		if ev.Type == "item.completed" && ev.Item.Type == "mcp_tool_call" && ev.Item.Server == "airlock" && ev.Item.Tool == tool {
			return ev
		}
	}
	t.Fatalf("codex reported no call of airlock's %s: %+v", tool, evs)
	return codexEvent{}
}

// call is one model turn that calls airlock's tool (Codex offers the tools of the
// MCP server named airlock in the namespace mcp__airlock).
func call(tool string, args map[string]any) agentmodel.OpenAITurn {
	return agentmodel.OpenAITurn{Namespace: "mcp__airlock", Tool: tool, Input: args}
}

// outputOf is the function_call_output that reached the model for the conversation's
// n-th call (0-based), from the last request of the conversation.
func (r *codexRig) outputOf(n int) string {
	r.t.Helper()
	conv := r.model.Conversation()
	if len(conv) == 0 {
		r.t.Fatal("Codex never asked the model")
	}
	outs := conv[len(conv)-1].Outputs()
	if n >= len(outs) {
		r.t.Fatalf("the model saw %d tool outputs, want call %d's: %+v", len(outs), n, conv[len(conv)-1].Input)
	}
	return outs[n].Output
}

// noteExists reports whether the notes server still holds note id.
func (r *codexRig) noteExists(id string) bool {
	_, err := os.Stat(filepath.Join(r.notes, id+".txt"))
	return err == nil
}

// auditOf returns the audit records of airlock's calls of server's tool, oldest
// first.
func (r *codexRig) auditOf(server, tool string) []audit.Record {
	r.t.Helper()
	path := filepath.Join(r.stateDir, "audit.jsonl")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return auditRecords(r.t, path, func(rec audit.Record) bool { return rec.Server == server && rec.Tool == tool })
}

// decisions lists kind:decision:decided_by of records.
func decisions(recs []audit.Record) []string {
	var out []string
	for _, rec := range recs {
		if rec.Kind == "decision" {
			out = append(out, rec.Decision+":"+rec.DecidedBy)
		}
	}
	return out
}

// What Codex does with airlock registered the way its own docs say, by `codex mcp
// add airlock --url … --bearer-token-env-var AIRLOCK_TOKEN`, and no approval
// setting: it offers airlock's tools and runs a read, but refuses a destructive
// tool itself in `codex exec`, whatever approval_policy says, so airlock never sees
// the call and the person is never asked. This is why the snippet sets
// default_tools_approval_mode = "approve".
func TestCodex_WithoutApproveCodexRefusesDestructiveTools(t *testing.T) {
	r := startCodexRig(t)
	r.writeCodexConfig("")
	r.token = strings.Trim(strings.TrimPrefix(strings.TrimSpace(r.airlock("gateway", "token", "--export", "--config", r.cfg)), "export AIRLOCK_TOKEN="), "'")
	r.codex("mcp", "add", "airlock", "--url", "http://"+r.addr+"/mcp", "--bearer-token-env-var", "AIRLOCK_TOKEN")
	if cfg, _ := os.ReadFile(filepath.Join(r.home, "config.toml")); strings.Contains(string(cfg), "approval_mode") {
		t.Fatalf("codex mcp add wrote an approval setting:\n%s", cfg)
	}
	const refusal = "MCP tool call requires approval, but approval policy is never"
	for _, policy := range []string{"", "on-request", "on-failure", "never"} {
		r.model.Reset()
		r.model.SetTurns(call("notes__list_notes", nil), call("notes__delete_note", map[string]any{"id": "note-2"}), agentmodel.OpenAITurn{Text: "done"})
		// required: Codex waits for airlock's tools before its first turn (by
		// default it does not, and a slow start would offer the model none).
		extra := []string{"-c", "mcp_servers.airlock.required=true"}
		if policy != "" {
			extra = append(extra, "-c", "approval_policy="+policy)
		}
		evs := r.exec("tidy my notes", extra...)
		if ev := codexToolCall(t, evs, "notes__list_notes"); ev.Item.Status != "completed" || !strings.Contains(r.outputOf(0), "Home Wi-Fi") {
			t.Errorf("approval_policy %q: the read did not run: %+v", policy, ev.Item)
		}
		ev := codexToolCall(t, evs, "notes__delete_note")
		if ev.Item.Status != "failed" || ev.Item.Error == nil || ev.Item.Error.Message != refusal || !strings.Contains(r.outputOf(1), refusal) {
			t.Errorf("approval_policy %q: want Codex's own refusal, got %+v; the model saw %q", policy, ev.Item, r.outputOf(1))
		}
		t.Logf("approval_policy %q: Codex answered the destructive call itself: %q", policy, ev.Item.Error.Message)
	}
	if got := decisions(r.auditOf("notes", "delete_note")); len(got) != 0 {
		t.Errorf("airlock saw the refused call: %v", got)
	}
	if !r.noteExists("note-2") {
		t.Error("note-2 was deleted")
	}
	if strings.Contains(r.s.text(), "allow this call?") {
		t.Errorf("a question is on screen:\n%s", r.s.text())
	}
}

// The snippet registers airlock in Codex: `codex mcp list` lists it enabled with
// its bearer token from AIRLOCK_TOKEN and the snippet's timeout (this Codex's list
// reads the config only: "enabled" is no connection), Codex connects and offers the
// model exactly airlock's tools, and a read runs without a question, its output
// reaching the model.
func TestCodex_SnippetRegistersAirlockAndAReadRunsUnasked(t *testing.T) {
	r := startCodexRig(t)
	snip := r.useSnippet()
	for _, want := range []string{`bearer_token_env_var = "AIRLOCK_TOKEN"`, `default_tools_approval_mode = "approve"`, "tool_timeout_sec = 300", "http://" + r.addr + "/mcp"} {
		if !strings.Contains(snip, want) {
			t.Errorf("the snippet lacks %s:\n%s", want, snip)
		}
	}
	list := r.codex("mcp", "list")
	t.Logf("codex mcp list:\n%s", list)
	if !regexp.MustCompile(`(?m)^airlock\s+http://` + regexp.QuoteMeta(r.addr) + `/mcp\s+AIRLOCK_TOKEN\s+enabled\s+Bearer token`).MatchString(list) {
		t.Errorf("codex mcp list does not show airlock enabled with its bearer token:\n%s", list)
	}
	var listed []struct {
		Name           string   `json:"name"`
		Enabled        bool     `json:"enabled"`
		AuthStatus     string   `json:"auth_status"`
		ToolTimeoutSec *float64 `json:"tool_timeout_sec"`
	}
	if err := json.Unmarshal([]byte(r.codex("mcp", "list", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].Name != "airlock" || !listed[0].Enabled || listed[0].AuthStatus != "bearer_token" || listed[0].ToolTimeoutSec == nil || *listed[0].ToolTimeoutSec != 300 {
		t.Errorf("codex mcp list --json: %+v", listed)
	}
	if get := r.codex("mcp", "get", "airlock"); !strings.Contains(get, "default_tools_approval_mode: approve") {
		t.Errorf("codex mcp get airlock:\n%s", get)
	}

	r.model.SetTurns(call("notes__list_notes", nil), agentmodel.OpenAITurn{Text: "you have 3 notes"})
	evs := r.exec("list my notes")
	conv := r.model.Conversation()
	if len(conv) != 2 {
		t.Fatalf("%d model requests, want 2", len(conv))
	}
	offered := conv[0].ToolsIn("mcp__airlock")
	sort.Strings(offered)
	if want := "mail__send_email notes__create_note notes__delete_note notes__list_notes web__fetch_url"; strings.Join(offered, " ") != want {
		t.Errorf("Codex offered the model %v of airlock's tools, want %s", offered, want)
	}
	if ev := codexToolCall(t, evs, "notes__list_notes"); ev.Item.Status != "completed" {
		t.Errorf("the read: %+v", ev.Item)
	}
	// Codex gives the model the result's structured content (the notes as JSON).
	if out := r.outputOf(0); !strings.Contains(out, "Home Wi-Fi") || !strings.Contains(out, "Wi-Fi password: correct-horse-battery-staple") {
		t.Errorf("the read's output did not reach the model: %q", out)
	}
	if got := decisions(r.auditOf("notes", "list_notes")); len(got) != 1 || got[0] != "allow:policy" {
		t.Errorf("audit of the read: %v, want one allow by policy", got)
	}
	r.s.waitFor("codex-mcp-client") // the activity strip names the agent
	if strings.Contains(r.s.text(), "allow this call?") {
		t.Errorf("the read asked:\n%s", r.s.text())
	}
}

// Through the snippet's settings Codex passes a destructive call on, and it asks in
// the TUI: allowed by keys it runs and its output reaches the model; denied with a
// typed reason in another run, the reason reaches the model and the note stays.
func TestCodex_DestructiveCallAsksInTheTUI(t *testing.T) {
	r := startCodexRig(t)
	r.useSnippet()

	r.model.SetTurns(call("notes__delete_note", map[string]any{"id": "note-2"}), agentmodel.OpenAITurn{Text: "deleted"})
	run := r.start("delete the Wi-Fi note")
	r.s.waitFor("notes__delete_note")
	if !r.noteExists("note-2") {
		t.Fatal("note-2 was deleted before anyone answered")
	}
	r.s.allowDestructive()
	evs := run.wait()
	if ev := codexToolCall(t, evs, "notes__delete_note"); ev.Item.Status != "completed" {
		t.Errorf("the allowed call: %+v", ev.Item)
	}
	if out := r.outputOf(0); !strings.Contains(out, `"id":"note-2"`) || !strings.Contains(out, "Home Wi-Fi") {
		t.Errorf("the model saw %q", out)
	}
	if r.noteExists("note-2") {
		t.Error("note-2 survived an allow")
	}
	if got := decisions(r.auditOf("notes", "delete_note")); len(got) != 1 || got[0] != "allow:person" {
		t.Errorf("audit: %v, want one allow by the person", got)
	}

	r.model.Reset()
	const reason = "keep my demo notes"
	r.model.SetTurns(call("notes__delete_note", map[string]any{"id": "note-3"}), agentmodel.OpenAITurn{Text: "not deleted"})
	run = r.start("delete the demo-day note")
	r.s.waitFor("note-3")
	r.s.denyWithReason(reason)
	evs = run.wait()
	ev := codexToolCall(t, evs, "notes__delete_note")
	out := r.outputOf(0)
	t.Logf("denied: Codex reports status %q; the model saw %q", ev.Item.Status, out)
	if !strings.Contains(out, reason) {
		t.Errorf("the person's reason did not reach the model: %q", out)
	}
	if !r.noteExists("note-3") {
		t.Error("note-3 was deleted after a denial")
	}
	if got := decisions(r.auditOf("notes", "delete_note")); len(got) != 2 || got[1] != "deny:person" {
		t.Errorf("audit: %v, want the second denied by the person", got)
	}
}

// A question whose agent went away is withdrawn, audited agent-gone, and the tool
// never runs: when `codex exec` is killed while its call waits, and when Codex
// itself gives up on the call after tool_timeout_sec (here 3 s) while it goes on
// running.
func TestCodex_AgentGoneWithdrawsItsQuestion(t *testing.T) {
	r := startCodexRig(t)
	r.useSnippet()

	r.model.SetTurns(call("notes__delete_note", map[string]any{"id": "note-1"}))
	run := r.start("delete the groceries note")
	r.s.waitFor("allow this call?")
	r.s.waitFor("note-1")
	left := time.Now()
	run.kill()
	r.s.waitFor("the agent disconnected")
	t.Logf("killed: the TUI said so %v after the kill", time.Since(left).Round(time.Millisecond))
	if strings.Contains(r.s.text(), "allow this call?") {
		t.Errorf("the question is still on screen:\n%s", r.s.text())
	}
	if got := r.waitDecisions("notes", "delete_note", 1); got[0] != "deny:agent-gone" {
		t.Errorf("audit: %v, want deny by agent-gone", got)
	}
	if !r.noteExists("note-1") {
		t.Error("note-1 was deleted after its agent was killed")
	}

	// Codex gives up on the call at tool_timeout_sec and asks the model again: the
	// model's answer waits until the screen was read, so Codex still runs then.
	// Codex sends that request as it gives up, so the screen is read until the
	// question is gone, for at most withdrawnWithin: its cancel may reach airlock,
	// and the next frame the terminal, a moment after the model hears from it.
	r.model.Reset()
	looked := make(chan string)
	r.model.SetTurns(call("notes__delete_note", map[string]any{"id": "note-3"}), agentmodel.OpenAITurn{Reply: func(agentmodel.OpenAIRequest) agentmodel.OpenAITurn {
		gaveUp := time.Now()
		screen := r.s.text()
		for strings.Contains(screen, "allow this call?") && time.Since(gaveUp) < withdrawnWithin {
			time.Sleep(20 * time.Millisecond)
			screen = r.s.text()
		}
		t.Logf("Codex gave up: the question left the screen within %v", time.Since(gaveUp).Round(time.Millisecond))
		looked <- screen
		return agentmodel.OpenAITurn{Text: "it timed out"}
	}})
	run = r.start("delete the demo-day note", "-c", "mcp_servers.airlock.tool_timeout_sec=3")
	r.s.waitFor("note-3")
	var screen string
	select {
	case screen = <-looked:
	case <-time.After(30 * time.Second):
		t.Fatalf("Codex never gave up on the call:\n%s", r.s.text())
	}
	evs := run.wait()
	if strings.Contains(screen, "allow this call?") {
		t.Errorf("the question Codex gave up on was still on screen %v after, while Codex ran:\n%s", withdrawnWithin, screen)
	}
	if ev := codexToolCall(t, evs, "notes__delete_note"); ev.Item.Error == nil || !strings.Contains(ev.Item.Error.Message, "timed out awaiting tools/call after 3s") {
		t.Errorf("Codex's report of the call: %+v", ev.Item)
	}
	// Codex's timer closes the call's request; whether its notifications/cancelled or
	// the closed connection reaches airlock first depends on scheduling, and either
	// withdraws the question.
	if got := r.waitDecisions("notes", "delete_note", 2); got[1] != "deny:agent-gone" && got[1] != "deny:agent-cancelled" {
		t.Errorf("audit: %v, want the second denied by agent-gone or agent-cancelled", got)
	}
	if !r.noteExists("note-3") {
		t.Error("note-3 was deleted after Codex gave up on the call")
	}
}

// withdrawnWithin is how long a question may stay on screen after its agent gave
// up on it: the agent's cancel crossing to airlock and the next frame, on a loaded
// 2-core machine.
const withdrawnWithin = 5 * time.Second

// waitDecisions waits until n decisions on server's tool are audited.
func (r *codexRig) waitDecisions(server, tool string, n int) []string {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := decisions(r.auditOf(server, tool))
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("audit of %s__%s: %v, want %d decisions", server, tool, got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Taint through Codex: a send runs unasked while the agent's context is clean;
// after a page of untrusted content reaches the agent, the same send asks, naming
// the taint, and a denial reaches the model.
func TestCodex_TaintMakesASendAsk(t *testing.T) {
	r := startCodexRig(t)
	r.useSnippet()
	mail := map[string]any{"to": "sam@example.com", "subject": "notes", "body": "the Wi-Fi password"}
	r.model.SetTurns(
		call("mail__send_email", mail),
		call("web__fetch_url", map[string]any{"url": demo.InjectionURL}),
		call("mail__send_email", mail),
		agentmodel.OpenAITurn{Text: "sent"},
	)
	run := r.start("mail sam my notes")
	r.s.waitFor("allow this call?")
	r.s.waitFor("tainted")
	r.s.waitGone("arming", "allow this call?")
	r.s.keys(keyEsc)
	evs := run.wait()
	for _, ev := range evs {
		if ev.Item.Type == "mcp_tool_call" && ev.Type == "item.completed" {
			t.Logf("codex: %s %s", ev.Item.Tool, ev.Item.Status)
		}
	}
	if !strings.Contains(r.outputOf(0), "queued") {
		t.Errorf("the clean send did not run: %q", r.outputOf(0))
	}
	if !strings.Contains(r.outputOf(1), "Five tips for using MCP servers safely") {
		t.Errorf("the page did not reach the model: %q", r.outputOf(1))
	}
	denied := r.outputOf(2)
	t.Logf("tainted send denied; the model saw %q", denied)
	if !strings.Contains(denied, "denied") {
		t.Errorf("the denial did not reach the model: %q", denied)
	}
	if got := decisions(r.auditOf("mail", "send_email")); len(got) != 2 || got[0] != "allow:policy" || got[1] != "deny:"+string(trust.DecidedByTaintThenPerson) {
		t.Errorf("audit of the sends: %v, want allow by policy, then deny by taint-asked-then-person", got)
	}
}

// With the snippet's required = true, Codex waits for airlock's tools before its
// first turn and does not start at all without the gateway. Without it, a session
// whose gateway answers late starts without airlock's tools. A proxy in front of
// the gateway holds Codex's first MCP request until the model is asked, or 3 s.
func TestCodex_RequiredWaitsForAirlock(t *testing.T) {
	r := startCodexRig(t)
	snip := r.useSnippet()
	target, err := url.Parse("http://" + r.addr)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorLog = log.New(io.Discard, "", 0) // a held request Codex gave up on
	var mu sync.Mutex
	var hold func() // the round's hold of its first request, nil once used
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		mu.Lock()
		h := hold
		hold = nil
		mu.Unlock()
		if h != nil {
			h()
		}
		q.Host = r.addr
		rp.ServeHTTP(w, q)
	}))
	defer proxy.Close()
	withProxy := strings.ReplaceAll(snip, "http://"+r.addr, proxy.URL)

	for _, tc := range []struct {
		name, snip string
		required   bool
	}{
		{"without required", strings.Replace(withProxy, "required = true\n", "", 1), false},
		{"the snippet's required = true", withProxy, true},
	} {
		r.model.Reset()
		r.model.SetTurns(call("notes__list_notes", nil), agentmodel.OpenAITurn{Text: "ok"})
		r.writeCodexConfig(tc.snip)
		askedWhileHeld := make(chan bool, 1)
		seen := r.model.Seen()
		mu.Lock()
		hold = func() {
			select {
			case <-seen:
				askedWhileHeld <- true
			case <-time.After(3 * time.Second):
				askedWhileHeld <- false
			}
		}
		mu.Unlock()
		r.exec("list my notes")
		conv := r.model.Conversation()
		if len(conv) == 0 {
			t.Fatalf("%s: the model was never asked", tc.name)
		}
		offered := len(conv[0].ToolsIn("mcp__airlock")) > 0
		held := <-askedWhileHeld
		t.Logf("%s: model asked while airlock's first answer was held: %v; airlock's tools in the first turn: %v", tc.name, held, offered)
		if held == tc.required || offered != tc.required {
			t.Errorf("%s: want Codex to wait for airlock: %v", tc.name, tc.required)
		}
	}

	// No gateway at the address: Codex does not start, and never asks the model.
	r.model.Reset()
	r.writeCodexConfig(strings.ReplaceAll(snip, "http://"+r.addr, "http://"+freeAddr(t)))
	run := r.start("list my notes")
	if err := run.end(); err == nil || !strings.Contains(run.errb.String(), "required MCP servers failed to initialize: airlock") {
		t.Errorf("codex exec without the gateway: %v\n%s", err, run.errb.String())
	}
	if n := len(r.model.Requests()); n != 0 {
		t.Errorf("the model was asked %d times without airlock", n)
	}
}

// The snippet's tool_timeout_sec follows the config's approval_timeout: Codex
// waits a minute longer than airlock's question does, at least its own 300 s.
func TestCodex_SnippetTimeoutFollowsApprovalTimeout(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, "state_dir = \""+state+"\"\n[policy]\napproval_timeout = \"10m\"\n[gateway]\nlisten = \"127.0.0.1:7999\"\n")
	for _, args := range [][]string{{"gateway", "snippet", "codex", "--config", cfg}, {"gateway", "snippet", "codex", "--env", "--config", cfg}} {
		r := airlock(t, "", args...)
		if r.code != 0 || !strings.Contains(r.stdout, "tool_timeout_sec = 660\n") || !strings.Contains(r.stdout, "approval_timeout (10m here)") ||
			!strings.Contains(r.stdout, `url = "http://127.0.0.1:7999/mcp"`) || !strings.Contains(r.stdout, "--export --config "+cli.ShellQuote(cfg)) {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}
