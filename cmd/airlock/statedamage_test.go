package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A tainted context's exfiltration call with a cut taint.json is not run unasked:
// with no terminal to ask on it is denied as a tainted call (exit 5), and airlock
// says that taint.json cannot be read. With --yes it is allowed once, as any
// tainted call is, and says so.
func TestCall_CutTaintFileTaintedCallAsks(t *testing.T) {
	state := t.TempDir()
	cfg := stateConfig(t, state, demoServerTOML("web", "trusted"), demoServerTOML("mail", "trusted"),
		"[servers.mail.tools.send_email]\nlabels = [\"exfiltration\"]\npolicy = \"allow\"\n")
	send := []string{"call", "mail", "send_email", "--config", cfg, "--args", `{"to":"a@example.com","subject":"s","body":"b"}`}
	if r := airlock(t, "", send...); r.code != 0 {
		t.Fatalf("clean context: exit %d\n%s", r.code, r.stderr)
	}
	if r := fetchBlog(t, cfg); r.code != 0 {
		t.Fatalf("fetch: exit %d\n%s", r.code, r.stderr)
	}
	path := filepath.Join(state, "taint.json")
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "fetch_url") {
		t.Fatalf("taint.json: %v %s", err, b)
	}
	if err := os.WriteFile(path, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	r := airlock(t, "", send...)
	if r.code == 0 || !strings.Contains(r.stderr, "Not a terminal and no --yes: denied.") ||
		!strings.Contains(r.stderr, "airlock: error: "+path+" cannot be read") || !strings.Contains(r.stderr, "treated as tainted") {
		t.Fatalf("tainted call with a cut taint.json: exit %d\n%s", r.code, r.stderr)
	}
	r = airlock(t, "", append(send, "--yes")...)
	if r.code != 0 || !strings.Contains(r.stderr, "--yes given: allowed once (nobody was asked).") || !strings.Contains(r.stderr, "taint.json cannot be read") ||
		!strings.Contains(r.stderr, "asked because of taint; allowed with --yes on the command line") {
		t.Fatalf("--yes with a cut taint.json: exit %d\n%s", r.code, r.stderr)
	}
}

// `airlock check` says which state file cannot be read and what airlock does
// meanwhile, as a notice of its report.
func TestCheck_UnreadableStateFilesAreNoticed(t *testing.T) {
	state := t.TempDir()
	cfg := docsConfig(t, state)
	dir := filepath.Dir(cfg)
	if err := os.Mkdir(filepath.Join(state, "taint.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.toml"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := airlock(t, "", "check", "--config", cfg)
	if !strings.Contains(r.stdout, "taint.json cannot be read, so every context is treated as tainted") ||
		!strings.Contains(r.stdout, "rules.toml cannot be read, so every tool asks at every call") {
		t.Fatalf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A gateway.token cut short or garbled is refused with a sentence that names the
// file and what to do, and never shows the file's bytes: not by `gateway token
// --export`, not by `gateway snippet`. rotate-token mends it.
func TestGatewayToken_CutOrGarbledRefusedNeverShown(t *testing.T) {
	good := strings.Repeat("0123456789abcdef", 4)
	for name, content := range map[string]string{
		"cut":     good[:40] + "\n",
		"garbled": good[:20] + "\x1b]0;pwned\x07" + good[31:] + "\n",
		"long":    good + good + "\n",
		"empty":   "",
	} {
		t.Run(name, func(t *testing.T) {
			state := t.TempDir()
			cfg := writeConfig(t, "state_dir = \""+state+"\"\n[gateway]\nlisten = \"127.0.0.1:7999\"\n")
			path := filepath.Join(state, "gateway.token")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"gateway", "token", "--export", "--config", cfg}, {"gateway", "snippet", "claude", "--config", cfg}} {
				r := airlock(t, "", args...)
				out := r.stdout + r.stderr
				if r.code == 0 || !strings.Contains(r.stderr, path+" does not hold a gateway token") || !strings.Contains(r.stderr, "airlock gateway rotate-token") {
					t.Errorf("%s: exit %d\n%s", args[1], r.code, out)
				}
				if content != "" && strings.Contains(out, strings.TrimSpace(content)[:20]) || strings.Contains(out, "\x1b") {
					t.Errorf("%s shows the token file's bytes:\n%q", args[1], out)
				}
			}
			if r := airlock(t, "", "gateway", "rotate-token", "--config", cfg); r.code != 0 {
				t.Fatalf("rotate-token: exit %d %s", r.code, r.stderr)
			}
			if r := airlock(t, "", "gateway", "token", "--export", "--config", cfg); r.code != 0 {
				t.Errorf("after rotate-token: exit %d %s", r.code, r.stderr)
			}
		})
	}
}

// A rules.toml airlock cannot read at start: `airlock call` says so, and a call the
// policy allows unasked asks instead (no terminal: denied, exit 5), since no rule
// of the file was ever read; with --yes it runs once.
func TestCall_GarbledRulesFileAsks(t *testing.T) {
	state := t.TempDir()
	cfg := docsConfig(t, state)
	dir := filepath.Dir(cfg)
	rules := filepath.Join(dir, "rules.toml")
	if err := os.WriteFile(rules, []byte("version = 1\ncount = 1\n[[rules]]\nid = \"r-1\"\nserver = \"docs\"\ntool = \"get_doc\"\npolicy = \"deny"), 0o600); err != nil {
		t.Fatal(err)
	}
	get := []string{"call", "docs", "get_doc", "--config", cfg, "--args", `{"id":"mcp-overview"}`}
	r := airlock(t, "", get...)
	if r.code != 5 || !strings.Contains(r.stderr, "airlock: error: "+rules+" cannot be read") || !strings.Contains(r.stderr, "rules.toml cannot be read") {
		t.Fatalf("a call with a garbled rules.toml: exit %d\n%s", r.code, r.stderr)
	}
	if r := airlock(t, "", append(get, "--yes")...); r.code != 0 || !strings.Contains(r.stderr, "--yes given: allowed once (nobody was asked).") {
		t.Fatalf("--yes: exit %d\n%s", r.code, r.stderr)
	}
}
