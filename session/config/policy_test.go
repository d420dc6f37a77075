package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/trust"
)

func TestPolicyPlacesFor(t *testing.T) {
	for _, c := range []struct {
		goos        string
		programData string
		env         map[string]string
		want        []string
	}{
		{"linux", "", nil, []string{"/etc/airlock/policy.toml"}},
		{"freebsd", "", nil, []string{"/etc/airlock/policy.toml"}},
		{"darwin", "", nil, []string{"/Library/Application Support/airlock/policy.toml"}},
		{"windows", `D:\PD`, nil, []string{`D:\PD\airlock\policy.toml`}},
		{"windows", "", nil, []string{`C:\ProgramData\airlock\policy.toml`}},
		// the person's %ProgramData% never moves the system's policy
		{"windows", `C:\ProgramData`, map[string]string{"ProgramData": `C:\Users\me\fake`}, []string{`C:\ProgramData\airlock\policy.toml`}},
		{"windows", "", map[string]string{"ProgramData": `C:\Users\me\fake`}, []string{`C:\ProgramData\airlock\policy.toml`}},
		{"linux", "", map[string]string{PolicyEnv: "/srv/team.toml"}, []string{"/etc/airlock/policy.toml", "/srv/team.toml"}},
		{"linux", "", map[string]string{PolicyEnv: ""}, []string{"/etc/airlock/policy.toml"}},
	} {
		places, err := policyPlacesFor(c.goos, c.programData, envOf(c.env))
		if err != nil {
			t.Fatalf("%s %v: %v", c.goos, c.env, err)
		}
		var got []string
		for i, p := range places {
			got = append(got, p.path)
			if p.named != (i == 1) {
				t.Errorf("%s: place %d named = %v", c.goos, i, p.named)
			}
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s %v: got %q, want %q", c.goos, c.env, got, c.want)
		}
	}
	if _, err := policyPlacesFor("linux", "", envOf(map[string]string{PolicyEnv: "team.toml"})); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("relative AIRLOCK_POLICY: %v", err)
	}
}

// writePolicy writes a policy file in a private folder of its own, mode 0644.
func writePolicy(t *testing.T, text string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "airlock")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "policy.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("the owner check wants a root-owned file: run as root")
	}
}

func TestReadPolicyFile_OwnerCheck(t *testing.T) {
	needRoot(t)
	p := writePolicy(t, "[policy]\nwrite = \"ask\"\n")
	if _, err := readPolicyFile(p); err != nil {
		t.Fatalf("a root-owned 0644 policy: %v", err)
	}

	if err := os.Chmod(p, 0o666); err != nil {
		t.Fatal(err)
	}
	_, err := readPolicyFile(p)
	want := "policy " + p + " is writable by others (mode 0666); airlock will not start"
	if err == nil || err.Error() != want {
		t.Errorf("writable by others:\n got %v\nwant %s", err, want)
	}
	os.Chmod(p, 0o664)
	if _, err := readPolicyFile(p); err == nil || !strings.Contains(err.Error(), "writable by its group (mode 0664)") {
		t.Errorf("writable by group: %v", err)
	}
	os.Chmod(p, 0o644)

	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := readPolicyFile(p); err == nil || !strings.Contains(err.Error(), "is owned by uid 65534, not root; airlock will not start") {
		t.Errorf("owned by uid 65534: %v", err)
	}
	os.Chown(p, 0, 0)

	if err := os.Chmod(filepath.Dir(p), 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := readPolicyFile(p); err == nil || !strings.Contains(err.Error(), "which is writable by others (mode 0777)") {
		t.Errorf("folder writable by others: %v", err)
	}
	os.Chmod(filepath.Dir(p), 0o755)

	link := filepath.Join(filepath.Dir(p), "link.toml")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	if _, err := readPolicyFile(link); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("a symlink: %v", err)
	}
}

// The check's inputs are injectable: a file owned by the running (non-root) user,
// writable by it, and one owned by another user.
func TestPolicyStatProblem(t *testing.T) {
	for _, c := range []struct {
		st   policyStat
		me   int
		want string
	}{
		{policyStat{uid: 0, perm: 0o644}, 1000, ""},
		{policyStat{uid: 0, perm: 0o644}, 0, ""},
		{policyStat{uid: 1000, perm: 0o644}, 1000, "is owned by uid 1000, not root"},
		{policyStat{uid: 1001, perm: 0o600}, 1000, "is owned by uid 1001, not root"},
		{policyStat{uid: 0, perm: 0o646}, 1000, "is writable by others (mode 0646)"},
		{policyStat{uid: 0, perm: 0o664}, 0, "is writable by its group (mode 0664)"},
	} {
		if got := policyStatProblem(c.st, c.me); got != c.want {
			t.Errorf("%+v as %d: got %q, want %q", c.st, c.me, got, c.want)
		}
	}
}

func TestLoadPolicies_NamedMissingFailsClosed(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.toml")
	t.Setenv(PolicyEnv, missing)
	_, err := LoadPolicies()
	var pe *PolicyError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "does not exist (AIRLOCK_POLICY names it); airlock will not start") {
		t.Fatalf("got %v", err)
	}
	if _, err := LoadWithPolicy(writeConfig(t, "")); err == nil {
		t.Fatal("LoadWithPolicy with a missing AIRLOCK_POLICY loaded")
	}
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParsePolicy_Strict(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"unknown key", "[policy]\nwrite = \"ask\"\nbogus = 1\n", "team.toml:3: unknown key policy.bogus"},
		{"approval timeout is not the policy's", "[policy]\napproval_timeout = \"1s\"\n", "team.toml:2: unknown key policy.approval_timeout"},
		{"server defined", "[servers.web]\ncommand = \"x\"\n", "team.toml:2: unknown key servers.web.command; a policy's server table does not define a server"},
		{"allow rule", "[servers.fs.tools.read]\n[[servers.fs.tools.read.rules]]\nwhen = { path = { glob = \"/tmp/**\" } }\npolicy = \"allow\"\n", "team.toml:2: servers.fs.tools.read.rules[0].policy: a policy rule may only deny or ask"},
		{"duplicate key", "[policy]\nwrite = \"ask\"\nwrite = \"deny\"\n", "team.toml:3"},
		{"wrong type", "allow_yes_flag = \"no\"\n", "team.toml:1: allow_yes_flag: want true or false, got string"},
		{"bad trust", "[servers.web]\ntrust = \"sure\"\n", "team.toml:2: servers.web.trust: want trusted|untrusted|blocked"},
		{"empty pattern", "allowed_servers = [\"\"]\n", "team.toml:1: allowed_servers[0]: an empty pattern matches nothing"},
	} {
		_, err := ParsePolicy([]byte(c.text), "team.toml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func mustPolicy(t *testing.T, text string) *Policy {
	t.Helper()
	p, err := ParsePolicy([]byte(text), "/etc/airlock/policy.toml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustConfig(t *testing.T, text string) *Config {
	t.Helper()
	c, err := Parse([]byte(text), "config.toml", envOf(map[string]string{"HOME": "/home/u"}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPolicyApply_Precedence(t *testing.T) {
	c := mustConfig(t, `
[policy]
write = "allow"
[limits]
calls_per_minute = 30
max_waiting_per_context = 4
[servers.web]
url = "https://web.example/mcp"
trust = "trusted"
rate = "100/min"
[servers.web.tools.fetch]
policy = "allow"
[servers.notes]
command = "notes-server"
trust = "untrusted"
[servers.gone]
command = "x"
trust = "blocked"
`)
	p := mustPolicy(t, `# team policy
[policy]
write = "ask"
read = "allow"

[limits]
calls_per_minute = 10
max_waiting_per_context = 8

[servers.web]
trust = "untrusted"
rate = "5/min"
rate_action = "deny"

[servers.web.tools.fetch]
policy = "deny"

[servers.notes]
trust = "trusted"

[servers.gone]
trust = "trusted"

[servers.nobody]
trust = "blocked"
`)
	if err := p.Apply(c); err != nil {
		t.Fatal(err)
	}
	if c.Policy.Write != trust.Ask || c.Policy.Read != trust.Allow {
		t.Errorf("tiers: %+v", c.Policy)
	}
	if got := c.Managed.TierCap(trust.TierWrite); got.Action != trust.Ask || got.Source.String() != "policy: /etc/airlock/policy.toml:3" {
		t.Errorf("write cap: %+v", got)
	}
	if c.Limits.CallsPerMinute != 10 || c.LimitSources["calls_per_minute"].Line != 7 {
		t.Errorf("calls_per_minute: %d %+v", c.Limits.CallsPerMinute, c.LimitSources)
	}
	if c.Limits.MaxWaitingPerContext != 4 {
		t.Errorf("max_waiting_per_context: the smaller is the user's 4, got %d", c.Limits.MaxWaitingPerContext)
	}
	byName := map[string]*Server{}
	for i := range c.Servers {
		byName[c.Servers[i].Name] = &c.Servers[i]
	}
	web := byName["web"]
	if web.Trust != trust.Untrusted || web.TrustSource.String() != "policy: /etc/airlock/policy.toml:11" {
		t.Errorf("web trust %v from %q", web.Trust, web.TrustSource)
	}
	if web.Rate == nil || web.Rate.N != 100 || len(web.PolicyRates) != 1 || web.PolicyRates[0].Rate.N != 5 || !web.PolicyRates[0].Rate.Denies() {
		t.Errorf("web rates: %+v %+v", web.Rate, web.PolicyRates)
	}
	if cp := web.Tools["fetch"].Cap; cp.Action != trust.Deny || cp.Source.Line != 16 {
		t.Errorf("fetch cap: %+v", cp)
	}
	// A policy's trusted never loosens the person's untrusted or blocked.
	if n := byName["notes"]; n.Trust != trust.Untrusted || n.TrustSource.IsPolicy() {
		t.Errorf("notes: %v %q", n.Trust, n.TrustSource)
	}
	if g := byName["gone"]; g.Trust != trust.BlockedServer || g.TrustSource.IsPolicy() {
		t.Errorf("gone: %v %q", g.Trust, g.TrustSource)
	}
	if _, ok := byName["nobody"]; ok || len(c.Servers) != 3 {
		t.Errorf("a policy table for a server the person lacks defined one: %d servers", len(c.Servers))
	}
}

func TestPolicyApply_ServerPatterns(t *testing.T) {
	c := mustConfig(t, `
[servers.fs]
command = "/usr/bin/npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
[servers.evil]
command = "/usr/bin/npx"
args = ["-y", "@evil/server"]
[servers.spaced]
command = "/usr/bin/npx"
args = ["-y @modelcontextprotocol/server-filesystem"]
[servers.web]
url = "https://mcp.example.com/mcp"
[servers.other]
url = "https://other.example/mcp"
`)
	p := mustPolicy(t, `allowed_servers = ["/usr/bin/npx -y @modelcontextprotocol/*", "https://*.example.com/**"]
denied_servers = ["https://other.*"]
`)
	if err := p.Apply(c); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"fs":     "",
		"evil":   "match none of allowed_servers (policy: /etc/airlock/policy.toml:1)",
		"spaced": "match none of allowed_servers",
		"web":    "",
		"other":  `denied_servers pattern "https://other.*" (policy: /etc/airlock/policy.toml:2)`,
	}
	for _, s := range c.Servers {
		w := want[s.Name]
		if w == "" {
			if s.Trust == trust.BlockedServer || s.Blocked != "" {
				t.Errorf("%s blocked: %s", s.Name, s.Blocked)
			}
			continue
		}
		if s.Trust != trust.BlockedServer || !strings.Contains(s.Blocked, w) || s.TrustCap != trust.BlockedServer {
			t.Errorf("%s: trust %v, %q; want blocked, %q", s.Name, s.Trust, s.Blocked, w)
		}
	}
}

func TestMatchGlob(t *testing.T) {
	for _, c := range []struct {
		g, s string
		want bool
	}{
		{"*", "", true},
		{"**", "a/b c", true},
		{"a**b", "a/x/y b", true},
		{"a*", "b", false},
		{"npx -y @scope/*", "npx -y @scope/pkg --flag", true},
		{"npx -y @scope/*", "npx -y @scopeX/pkg", false},
		{"?", "é", true},
		{"?", "\xff", true},
		{"??", "\xff", false},
		{`a\*b`, "a*b", true},
		{`a\*b`, "axb", false},
		{"*a*a*a*a*a*b", strings.Repeat("a", 200), false},
		{"x\x00y", "x\x00y", true},
	} {
		if got := matchGlob(c.g, c.s); got != c.want {
			t.Errorf("matchGlob(%q, %q) = %v, want %v", c.g, c.s, got, c.want)
		}
	}
	s := Server{Command: "npx", Args: []string{"a b", "c\x1bd", "e"}}
	if got := s.CommandLine(); got != `npx "a b" "c\x1bd" e` {
		t.Errorf("CommandLine = %s", got)
	}
}

func TestPolicyApply_AllowYesAndRules(t *testing.T) {
	c := mustConfig(t, "[servers.fs]\ncommand = \"fs\"\n")
	p := mustPolicy(t, `allow_yes_flag = false

[[servers.fs.tools.write_file.rules]]
when = { path = { glob = "/etc/**" } }
policy = "deny"
`)
	if err := p.Apply(c); err != nil {
		t.Fatal(err)
	}
	if c.Managed.AllowYes || c.Managed.YesSource.String() != "policy: /etc/airlock/policy.toml:1" {
		t.Errorf("allow_yes_flag: %+v", c.Managed)
	}
	rules := c.Servers[0].Tools["write_file"].PolicyRules
	if len(rules) != 1 || rules[0].Source != "policy /etc/airlock/policy.toml:3" || rules[0].Policy != trust.Deny {
		t.Errorf("policy rules: %+v", rules)
	}
}
