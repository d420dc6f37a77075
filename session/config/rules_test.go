package config

import (
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/trust"
)

const rulesExample = `[servers.web]
command = "web"
[[servers.web.tools.fetch_url.rules]]
when = { url = { host = ["docs.python.org", "*.go.dev"] } }
policy = "allow"

[servers.fs]
command = "fs"
[[servers.fs.tools.write_file.rules]]
when = { path = { glob = "~/project/**" } }
policy = "allow"
[[servers.fs.tools.write_file.rules]]
when = { path = { glob = "**/.ssh/**" } }
policy = "deny"
reason = "keys stay home"
`

func TestRules_ConfigParses(t *testing.T) {
	c, err := Parse([]byte(rulesExample), "/etc/airlock/config.toml", func(k string) (string, bool) {
		if k == "HOME" {
			return "/home/ann", true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	fs := c.Servers[0].Tools["write_file"].Rules
	if len(fs) != 2 || fs[0].Name != "servers.fs.tools.write_file.rules[0]" || fs[0].Source != "config.toml:9" || fs[1].Source != "config.toml:12" || fs[1].Reason != "keys stay home" || fs[1].Policy != trust.Deny {
		t.Fatalf("fs rules = %+v", fs)
	}
	// ~ was expanded by the loader with HOME
	a := trust.DecodeArgs([]byte(`{"path":"/home/ann/project/x"}`), "/home/ann", nil)
	if r := trust.MatchRules(fs, a); r == nil || r.Name != fs[0].Name {
		t.Errorf("the project rule did not match: %v", r)
	}
	a = trust.DecodeArgs([]byte(`{"path":"~/project/../.ssh/id_rsa"}`), "/home/ann", nil)
	if r := trust.MatchRules(fs, a); r == nil || r.Policy != trust.Deny {
		t.Errorf("the .ssh escape was not denied: %v", r)
	}
	web := c.Servers[1].Tools["fetch_url"].Rules
	if len(web) != 1 || web[0].Source != "config.toml:3" || !strings.Contains(web[0].Sentence(), "rules[0] (config.toml:3) allows") {
		t.Fatalf("web rules = %+v", web)
	}
}

func TestRules_ConfigErrorsNameKeyAndLine(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == "HOME" {
			return "/home/ann", true
		}
		return "", false
	}
	src := `[servers.fs]
command = "fs"
[[servers.fs.tools.write_file.rules]]
when = { path = { glob = "project/**" } }
policy = "allow"
[[servers.fs.tools.write_file.rules]]
when = { path = { regex = ".*" }, size = { max = "big" } }
policy = "sometimes"
colour = "red"
[[servers.fs.tools.write_file.rules]]
when = { url = "docs.python.org" }
[servers.fs.tools.read_file]
rules = "allow"
`
	_, err := Parse([]byte(src), "config.toml", env)
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`config.toml:3: servers.fs.tools.write_file.rules[0].when.path.glob: glob must be an absolute path, start with ~/ or start with **/`,
		`config.toml:6: servers.fs.tools.write_file.rules[1].colour: unknown key in a rule (when, policy, reason)`,
		`config.toml:6: servers.fs.tools.write_file.rules[1].policy: want allow|ask|deny, got "sometimes"`,
		`config.toml:6: servers.fs.tools.write_file.rules[1].when.path.regex: unknown matcher "regex" (equals, one_of, glob, prefix, host, max)`,
		`config.toml:6: servers.fs.tools.write_file.rules[1].when.size.max: max takes a number not below zero`,
		`config.toml:10: servers.fs.tools.write_file.rules[2].policy: a rule needs policy = "allow", "ask" or "deny"`,
		`config.toml:10: servers.fs.tools.write_file.rules[2].when.url: want a table of matchers (equals, one_of, glob, prefix, host, max), got string`,
		`config.toml:13: servers.fs.tools.read_file.rules: want an array of tables ([[servers.fs.tools.read_file.rules]]), got string`,
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}
