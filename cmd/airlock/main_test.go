package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/fence"
)

// The test binary doubles as airlock: with AIRLOCK_AS_MAIN=1 it runs main's run on
// its arguments. Config files whose command is "airlock" then start this same binary
// as `demo-server NAME`, so the tests below run the real command end to end over real
// stdio subprocesses. A stdio server gets only a minimal environment, so a child
// started as `demo-server NAME` is recognised by its arguments.
func TestMain(m *testing.M) {
	noRaceExitSleep()
	if len(os.Args) == 3 && os.Args[1] == fence.LauncherArg {
		os.Exit(fence.Main(os.Args[2]))
	}
	if f := os.Getenv("AIRLOCK_TEST_DESC_FILE"); f != "" {
		os.Exit(serveDescFile(f))
	}
	if mode := os.Getenv(sessiontest.EnvServer); mode != "" {
		os.Exit(sessiontest.Serve(mode))
	}
	if os.Getenv("AIRLOCK_TEST_PATHFS") == "1" {
		os.Exit(servePathFS())
	}
	if os.Getenv("AIRLOCK_TEST_NAMES_SERVER") != "" {
		os.Exit(serveNames())
	}
	if os.Getenv("AIRLOCK_TEST_FILE_SERVER") != "" {
		os.Exit(serveFiles())
	}
	if os.Getenv("AIRLOCK_AS_MAIN") == "1" || len(os.Args) > 1 && os.Args[1] == "demo-server" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

type result struct {
	stdout, stderr string
	code           int
}

func airlock(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return airlockIn(t, t.TempDir(), stdin, args...)
}

// airlockIn is airlock with XDG_STATE_HOME at state and no config at the default path.
func airlockIn(t *testing.T, state, stdin string, args ...string) result {
	t.Helper()
	cmd := asAirlock(t, nil, stateEnv(state), args...)
	cmd.Stdin = strings.NewReader(stdin)
	return runResult(t, cmd)
}

// asAirlock is this test binary run as `airlock args...`, in the test's
// environment less the variables named in drop, with AIRLOCK_AS_MAIN=1 and then
// set added.
func asAirlock(t testing.TB, drop, set []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(selfPath(t), args...)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(drop, k) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, "AIRLOCK_AS_MAIN=1"), set...)
	return cmd
}

// stateEnv is the environment of an airlock with its state in state and no
// config at the default path.
func stateEnv(state string) []string {
	return []string{"XDG_STATE_HOME=" + state, "XDG_CONFIG_HOME=" + filepath.Join(state, "none")}
}

// auditRecords reads the audit log at path and returns its records that keep
// holds for, oldest first; a line that is not a record is passed over.
func auditRecords(t testing.TB, path string, keep func(audit.Record) bool) []audit.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []audit.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r audit.Record
		if json.Unmarshal(sc.Bytes(), &r) == nil && keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// selfPath is this test binary: airlock with AIRLOCK_AS_MAIN=1, a demo server as
// `demo-server NAME`, and each test server of TestMain under its variable.
func selfPath(t testing.TB) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self
}

// runResult runs cmd to its end and returns what it printed and its exit code; a
// command that cannot be run at all fails the test.
func runResult(t testing.TB, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code, err := runCode(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

// runCode runs cmd to its end and returns its exit code; the error is that of a
// command that could not be run or waited for (the code is -1 then).
func runCode(cmd *exec.Cmd) (int, error) {
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return -1, err
	}
	return 0, nil
}

// startPiped starts cmd with its stdin and stdout as pipes, the test's ends of
// which it returns; the caller stops the process.
func startPiped(t testing.TB, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, stdout
}

type location struct {
	File string
	Line int
}

type checkJSON struct {
	SchemaVersion int `json:"schema_version"`
	Source        string
	Config        string
	Servers       []struct {
		Name, Status, Error, Trust, Protocol string
		InstructionsChanged                  bool     `json:"instructions_changed"`
		Env                                  []string `json:"env"`
		Location                             *location
		// The demo servers offer no resources or prompts: always empty lists.
		Resources         []json.RawMessage `json:"resources"`
		ResourceTemplates []json.RawMessage `json:"resource_templates"`
		Prompts           []json.RawMessage `json:"prompts"`
		// No demo server asks for a sandbox: requested false, empty lists.
		Sandbox struct {
			Requested, Applied bool
			Network, Detail    string
			Read, Write        []string
		}
	}
	Tools []struct {
		Server, Name, Qualified, Tier, Policy, Pin string
		ServedName                                 string `json:"served_name"`
		Declared                                   json.RawMessage
		Effective                                  map[string]bool
		Legs, Reasons                              []string
		Location                                   *location
		Rules                                      []struct {
			Name, Source, Policy, Reason string
			When                         []struct {
				Field, Matcher string
				Values         []any
			}
		}
	}
	Hazards []struct {
		Kind, Severity, Summary, ID string
		Unguarded, Baselined        bool
		Legs                        map[string][]string
		Rules                       []string
		Unasked                     []string
		Fixes                       []struct {
			Effect, Text, TOML string
			Changes            []json.RawMessage
		}
		Location *location
	}
	Drift []json.RawMessage
	// The demo's notes server looks like a persistent store.
	Suggestions []struct {
		Message  string
		Location *location
	}
	Verdict struct {
		FailOn   string `json:"fail_on"`
		Failed   bool
		ExitCode int `json:"exit_code"`
		Matched  []string
	}
}

// The demo as docs/design.md describes it: the example config's four demo servers
// are ready, mail's send_email declares readOnlyHint true and is destructive, and a
// lethal trifecta names web__fetch_url, a notes__ tool and mail__send_email.
func TestCheckJSONOnExampleConfig(t *testing.T) {
	r := airlock(t, "", "check", "--config", exampleConfig, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	got, err := strictCheckJSON(r.stdout)
	if err != nil {
		t.Fatalf("decoding check --json: %v\n%s", err, r.stdout)
	}
	if len(got.Servers) != 4 {
		t.Fatalf("servers = %+v", got.Servers)
	}
	for _, s := range got.Servers {
		if sb := s.Sandbox; sb.Requested || sb.Applied || sb.Read == nil || sb.Write == nil {
			t.Errorf("%s sandbox = %+v, want none asked for, with empty lists", s.Name, sb)
		}
	}
	if got.SchemaVersion != 1 || got.Source != "live" || got.Config != exampleConfig || got.Verdict.ExitCode != 0 || got.Verdict.Failed {
		t.Errorf("schema_version %d source %q config %q verdict %+v", got.SchemaVersion, got.Source, got.Config, got.Verdict)
	}
	for _, s := range got.Servers {
		if s.Location == nil || s.Location.Line == 0 {
			t.Errorf("server %s has no config line", s.Name)
		}
	}
	for _, s := range got.Servers {
		if s.Status != "ready" || s.Protocol == "" {
			t.Errorf("server %s: status %q protocol %q error %q", s.Name, s.Status, s.Protocol, s.Error)
		}
		if !slices.Contains(s.Env, "PATH") || slices.Contains(s.Env, "AIRLOCK_AS_MAIN") {
			t.Errorf("server %s: env names %q, want the base set (PATH) and nothing else of airlock's", s.Name, s.Env)
		}
	}
	found := false
	for _, tool := range got.Tools {
		if tool.Qualified != tool.Server+"__"+tool.Name {
			t.Errorf("qualified %q for %s/%s", tool.Qualified, tool.Server, tool.Name)
		}
		if tool.Pin != "new" {
			t.Errorf("%s pin = %q on a fresh state dir, want new", tool.Qualified, tool.Pin)
		}
		if len(tool.Reasons) == 0 {
			t.Errorf("%s has no reasons", tool.Qualified)
		}
		if len(tool.Rules) != 0 {
			t.Errorf("%s has rules %+v", tool.Qualified, tool.Rules)
		}
		if tool.Qualified != "mail__send_email" {
			continue
		}
		found = true
		var declared map[string]any
		if err := json.Unmarshal(tool.Declared, &declared); err != nil || declared["readOnlyHint"] != true {
			t.Errorf("send_email declared = %s, want readOnlyHint true", tool.Declared)
		}
		if tool.Tier != "destructive" || !tool.Effective["open_world"] || tool.Effective["read_only"] {
			t.Errorf("send_email tier %q effective %v", tool.Tier, tool.Effective)
		}
	}
	if !found {
		t.Error("no mail__send_email in tools")
	}
	var trifecta bool
	for _, h := range got.Hazards {
		if h.Kind != "lethal-trifecta" {
			continue
		}
		trifecta = true
		uc, pd, ex := h.Legs["untrusted-content"], h.Legs["private-data"], h.Legs["exfiltration"]
		if !contains(uc, "web__fetch_url") || len(pd) == 0 || !strings.HasPrefix(pd[0], "notes__") || !contains(ex, "mail__send_email") {
			t.Errorf("trifecta legs %v", h.Legs)
		}
		if h.Severity != "critical" {
			t.Errorf("trifecta severity %q", h.Severity)
		}
	}
	if !trifecta {
		t.Error("no lethal-trifecta hazard")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	writeFile(t, p, body)
	return p
}

func TestCheckExitCodes(t *testing.T) {
	bad := writeConfig(t, "[servers.web]\ncommand = \"airlock\"\ntrsut = \"trusted\"\n")
	r := airlock(t, "", "check", "--config", bad)
	if r.code != 1 || !strings.Contains(r.stderr, "config.toml:3: unknown key servers.web.trsut") {
		t.Errorf("config error: exit %d, stderr %q", r.code, r.stderr)
	}
	failing := writeConfig(t, "\n"+demoServerTOML("docs", "trusted")+"[servers.gone]\ncommand = \"/nonexistent/mcp-server\"\nconnect_timeout = \"5s\"\n")
	r = airlock(t, "", "check", "--config", failing)
	if r.code != 3 {
		t.Errorf("a failed server: exit %d, want 3\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "✓ ready") || !strings.Contains(r.stdout, "✗ failed") {
		t.Errorf("table does not show one ready and one failed server:\n%s", r.stdout)
	}
}

func TestCallThroughApprovalEngine(t *testing.T) {
	cfg := exampleConfig
	// A read tool runs by policy.
	r := airlock(t, "", "call", "docs", "search_docs", "--config", cfg, "--args", `{"query":"trust"}`)
	if r.code != 0 || !strings.Contains(r.stdout, "✓ result:") {
		t.Errorf("read call: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The injection page is shown escaped, never raw.
	r = fetchBlog(t, cfg)
	if r.code != 0 || strings.Contains(r.stdout, "\x1b") || !strings.Contains(r.stdout, "⟨ESC⟩") {
		t.Errorf("injection page: exit %d, raw ESC present=%v\n%s", r.code, strings.Contains(r.stdout, "\x1b"), r.stdout)
	}
	// A call that asks is denied without a terminal...
	r = airlock(t, "", "call", "mail", "send_email", "--config", cfg, "--args", `{"to":"a@example.com","subject":"s","body":"b"}`)
	if r.code != 5 || !strings.Contains(r.stderr, "claims read-only") || !strings.Contains(r.stderr, "denied") {
		t.Errorf("ask without a terminal: exit %d\n%s", r.code, r.stderr)
	}
	// The denial sentence states the deciding reason; nobody was
	// asked, so it does not blame the person.
	if !strings.Contains(r.stderr, "no terminal to ask on") || strings.Contains(r.stderr, "by the person") {
		t.Errorf("denial without a terminal says:\n%s", r.stderr)
	}
	// Duplicate keys in --args are refused before anything runs.
	r = airlock(t, "", "call", "mail", "send_email", "--yes", "--config", cfg, "--args", `{"to":"a@example.com","t\u006f":"evil@example.com"}`)
	if r.code != 2 || !strings.Contains(r.stderr, `duplicate key "to"`) || strings.Contains(r.stdout, "queued message") {
		t.Errorf("duplicate keys in --args: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A number beyond float64 is refused naming the field and why, before anything
	// runs, not as "the arguments must be a JSON object".
	r = airlock(t, "", "call", "mail", "send_email", "--yes", "--config", cfg, "--args", `{"to":"a@example.com","subject":"s","body":"b","n":1e400}`)
	if r.code != 2 || !strings.Contains(r.stderr, `field "n": the number 1e400 cannot be read exactly`) || strings.Contains(r.stdout, "queued message") {
		t.Errorf("1e400 in --args: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// ...and allowed once with --yes, showing what was allowed.
	r = airlock(t, "", "call", "mail", "send_email", "--yes", "--config", cfg, "--args", `{"to":"a@example.com","subject":"s","body":"b"}`)
	if r.code != 0 || !strings.Contains(r.stdout, "queued message") || !strings.Contains(r.stderr, "a@example.com") {
		t.Errorf("--yes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Policy as code. The example config holds a trifecta; merging a fragment that
// denies the only exfiltration tool makes the same check pass.
func TestCheckFailOn(t *testing.T) {
	r := airlock(t, "", "check", "--config", exampleConfig, "--fail-on", "lethal-trifecta")
	if r.code != 4 || !strings.Contains(r.stderr, "lethal-trifecta") {
		t.Errorf("exit %d, stderr %q; want 4 naming the trifecta", r.code, r.stderr)
	}
	example, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	fixed := writeConfig(t, string(example)+"\n[servers.mail.tools.send_email]\npolicy = \"deny\"\n")
	r = airlock(t, "", "check", "--config", fixed, "--fail-on", "lethal-trifecta")
	if r.code != 0 {
		t.Errorf("after the fix: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "check", "--config", fixed, "--fail-on", "nonsense")
	if r.code != 2 || !strings.Contains(r.stderr, "unknown term") {
		t.Errorf("bad rule: exit %d %q", r.code, r.stderr)
	}
}

// `airlock call` audits through the same engine; `airlock audit verify` passes on the
// log and fails after one byte of it changes.
func TestCallIsAuditedAndVerifies(t *testing.T) {
	state := t.TempDir()
	cfg := docsConfig(t, state)
	mustGetDoc(t, cfg)
	r := auditVerify(t, cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "2 records, chain intact") {
		t.Fatalf("verify: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	log := filepath.Join(state, "audit.jsonl")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	if err := os.WriteFile(log, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r = airlock(t, "", "audit", "verify", log)
	if r.code != 1 || !strings.Contains(r.stderr, "FAILED") {
		t.Errorf("verify after a flipped bit: exit %d %q", r.code, r.stderr)
	}
}

func TestGatewaySnippet(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, "state_dir = \""+state+"\"\n[gateway]\nlisten = \"127.0.0.1:7999\"\n")
	for _, client := range []string{"claude", "cursor", "vscode"} {
		r := airlock(t, "", "gateway", "snippet", client, "--config", cfg)
		if r.code != 0 || !strings.Contains(r.stdout, "http://127.0.0.1:7999/mcp") || !strings.Contains(r.stdout, "Bearer ") {
			t.Errorf("%s snippet: exit %d\n%s%s", client, r.code, r.stdout, r.stderr)
		}
	}
	tok, err := os.ReadFile(filepath.Join(state, "gateway.token"))
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(state, "gateway.token")); st.Mode().Perm() != 0o600 {
		t.Errorf("token mode %v", st.Mode().Perm())
	}
	r := airlock(t, "", "gateway", "snippet", "claude", "--config", cfg)
	if !strings.Contains(r.stdout, strings.TrimSpace(string(tok))) {
		t.Error("the snippet does not carry the stored token (a new one was made?)")
	}
}

// `airlock audit verify` prints the head (record count and hash) for anchoring, and
// warns when the head file is missing: records cut from the end cannot be detected.
func TestAuditVerify_PrintsHeadWarnsWhenMissing(t *testing.T) {
	state := t.TempDir()
	cfg := docsConfig(t, state)
	mustGetDoc(t, cfg)
	log := filepath.Join(state, "audit.jsonl")
	head, err := os.ReadFile(log + ".head")
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Seq  int
		Hash string
	}
	if err := json.Unmarshal(head, &h); err != nil {
		t.Fatal(err)
	}
	r := airlock(t, "", "audit", "verify", log)
	if r.code != 0 || !strings.Contains(r.stdout, "head: 2 records, last hash "+h.Hash) || strings.Contains(r.stderr, "warning") {
		t.Errorf("verify with the head: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if err := os.Remove(log + ".head"); err != nil {
		t.Fatal(err)
	}
	r = airlock(t, "", "audit", "verify", log)
	if r.code != 0 || !strings.Contains(r.stderr, "warning: "+log+".head is missing") || !strings.Contains(r.stderr, "cannot be detected") ||
		!strings.Contains(r.stdout, "head: 2 records, last hash "+h.Hash) {
		t.Errorf("verify without the head: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// A taint outlives the process that caused it and only the person
// clears it with `airlock taint clear`, which is audited.
func TestTaintListAndClear(t *testing.T) {
	state := t.TempDir()
	cfg := stateConfig(t, state, demoServerTOML("web", "trusted"))
	r := fetchBlog(t, cfg)
	if r.code != 0 {
		t.Fatalf("fetch: exit %d\n%s", r.code, r.stderr)
	}
	r = airlock(t, "", "taint", "list", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "you") || !strings.Contains(r.stdout, "web__fetch_url") {
		t.Fatalf("taint list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "taint", "clear", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "cleared the taint of you") {
		t.Fatalf("taint clear: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "taint", "list", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "No context is tainted") {
		t.Errorf("after clear: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	log, err := os.ReadFile(filepath.Join(state, "audit.jsonl"))
	if err != nil || !strings.Contains(string(log), `"kind":"taint-cleared"`) {
		t.Errorf("the clear is not audited (%v):\n%s", err, log)
	}
}

// `airlock call` names the rule that decided (a config deny rule), and
// `airlock rules list|revoke` show and revoke a remembered decision, audited.
func TestRulesCallListRevoke(t *testing.T) {
	state := t.TempDir()
	cfg := stateConfig(t, state, demoServerTOML("web", "trusted"),
		"[[servers.web.tools.fetch_url.rules]]\nwhen = { url = { host = \"blog.example.com\" } }\npolicy = \"deny\"\nreason = \"no blogs\"\n"+
			"[policy]\nread = \"ask\"\n"+
			"[[servers.web.tools.fetch_url.rules]]\nwhen = { url = { host = \"example.com\" } }\npolicy = \"allow\"\n")
	// read asks (and there is no terminal, so an ask is denied): the allow rule lets it run, named
	r := airlock(t, "", "call", "web", "fetch_url", "--config", cfg, "--args", `{"url":"https://example.com/"}`)
	if r.code != 0 || !strings.Contains(r.stderr, "(allowed by an argument rule, in ") || !strings.Contains(r.stderr, "(rule servers.web.tools.fetch_url.rules[1] (config.toml:12) allows this call)") {
		t.Fatalf("allowed call: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// check --json lists each tool's rules
	r = airlock(t, "", "check", "--config", cfg, "--json")
	var got checkJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("check --json: %v\n%s", err, r.stdout)
	}
	for _, tool := range got.Tools {
		if tool.Qualified == "web__fetch_url" {
			if len(tool.Rules) != 2 || tool.Rules[0].Name != "servers.web.tools.fetch_url.rules[0]" || tool.Rules[0].Policy != "deny" || tool.Rules[0].Reason != "no blogs" ||
				tool.Rules[0].Source != "config.toml:6" || len(tool.Rules[0].When) != 1 || tool.Rules[0].When[0].Matcher != "host" || tool.Rules[1].Policy != "allow" {
				t.Errorf("web__fetch_url rules = %+v", tool.Rules)
			}
		}
	}
	r = airlock(t, "", "call", "web", "fetch_url", "--config", cfg, "--args", `{"url":"https://BLOG.example.com./mcp-tips"}`)
	if r.code == 0 || !strings.Contains(r.stderr, "rule servers.web.tools.fetch_url.rules[0] (config.toml:6) denies this call: no blogs") {
		t.Fatalf("call: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	rulesPath := filepath.Join(filepath.Dir(cfg), "rules.toml")
	doc := "version = 1\n[[rules]]\nid = \"r-0000abcd\"\nserver = \"web\"\ntool = \"fetch_url\"\nwhen = { url = { host = [\"example.com\"] } }\npolicy = \"allow\"\nfrom = \"the dialog, call c-1 in context you\"\ncreated = 2026-11-30T12:00:00Z\n"
	if err := os.WriteFile(rulesPath, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	r = airlock(t, "", "rules", "list", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "r-0000abcd") || !strings.Contains(r.stdout, "web__fetch_url") || !strings.Contains(r.stdout, "url host [example.com]") {
		t.Fatalf("rules list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "rules", "revoke", "r-0000abcd", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "revoked r-0000abcd") {
		t.Fatalf("rules revoke: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "rules", "list", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "No remembered decisions") {
		t.Errorf("after revoke: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "rules", "revoke", "r-0000abcd", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stderr, `no remembered rule "r-0000abcd"`) {
		t.Errorf("revoke again: exit %d\n%s", r.code, r.stderr)
	}
	log, err := os.ReadFile(filepath.Join(state, "audit.jsonl"))
	if err != nil || !strings.Contains(string(log), `"kind":"rule-revoked"`) || !strings.Contains(string(log), `"decided_by":"rule"`) {
		t.Errorf("not audited (%v):\n%s", err, log)
	}
}
