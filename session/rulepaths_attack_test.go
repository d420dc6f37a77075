package session_test

import (
	"context"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/trust"
)

// attackHome is linkHome with more links an agent might leave in the project: rel ->
// ../project/../.ssh (a relative target that climbs), up -> ../project/.. (HOME
// itself), loop -> loop, and a chain of 41 links l0 -> l1 -> … -> l40 -> ../.ssh
// (one more than Linux follows in one open).
func attackHome(t *testing.T) string {
	t.Helper()
	home := sessiontest.LinkHome(t)
	proj := filepath.Join(home, "project")
	links := map[string]string{"rel": "../project/../.ssh", "up": "../project/..", "loop": "loop"}
	for i := 0; i < 41; i++ {
		links["l"+strconv.Itoa(i)] = "l" + strconv.Itoa(i+1)
	}
	links["l41"] = "../.ssh"
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(proj, name)); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func callRaw(m *session.Manager, tool, args string) (*session.Outcome, error) {
	return m.Call(context.Background(), model.CallRequest{Server: "fs", Tool: tool, Args: []byte(args)})
}

// quote is a JSON string of s.
func quote(s string) string { return strconv.Quote(s) }

// Spellings of ~/.ssh/id_rsa against deny ~/.ssh/** on a read tool the tier allows:
// the deny is the only guard, so each must be denied by the rule (never read). The
// rule is rooted (not **/.ssh/**), so a spelling whose cleaned form leaves ~/.ssh is
// caught only by the resolution or by being a value that cannot be compared.
func TestRulePaths_AttackDenySpellings(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the spellings use /proc and Linux's limit of links")
	}
	home := attackHome(t)
	deny := sessiontest.PathRule(t, "servers.fs.tools.read_file.rules[0]", trust.Deny, home, map[string][2]any{"path": {trust.MatchGlob, "~/.ssh/**"}})
	nested := sessiontest.PathRule(t, "servers.fs.tools.read_nested.rules[0]", trust.Deny, home, map[string][2]any{"options.path": {trust.MatchGlob, "~/.ssh/**"}})
	many := sessiontest.PathRule(t, "servers.fs.tools.read_many.rules[0]", trust.Deny, home, map[string][2]any{"paths": {trust.MatchGlob, "~/.ssh/**"}})
	m, _ := sessiontest.PathFSManager(t, map[string][]trust.Rule{"read_file": {deny}, "read_nested": {nested}, "read_many": {many}})

	if out, err := sessiontest.CallPath(m, "read_file", map[string]string{"path": filepath.Join(home, "project", "notes.txt")}); err != nil || sessiontest.TextOf(out.Result) != "notes\n" {
		t.Fatalf("a read inside the project: %v %+v", err, out)
	}
	name := "nobody"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	cases := []struct{ what, tool, args string }{
		{"a link whose relative target climbs", "read_file", `{"path":` + quote(home+"/project/rel/id_rsa") + `}`},
		{"HOME through a link, then .ssh", "read_file", `{"path":` + quote(home+"/project/up/.ssh/id_rsa") + `}`},
		{"a chain of 41 links", "read_file", `{"path":` + quote(home+"/project/l0/id_rsa") + `}`},
		{"a link then ..", "read_file", `{"path":` + quote(home+"/project/cfg/../.ssh/id_rsa") + `}`},
		{"/proc/self/root", "read_file", `{"path":` + quote("/proc/self/root"+home+"/.ssh/id_rsa") + `}`},
		{"/dev/fd/../root", "read_file", `{"path":` + quote("/dev/fd/../root"+home+"/.ssh/id_rsa") + `}`},
		{"// at the start", "read_file", `{"path":` + quote("/"+home+"/.ssh/id_rsa") + `}`},
		{"a trailing /. on the folder", "read_file", `{"path":` + quote(home+"/.ssh/.") + `}`},
		{"~user/", "read_file", `{"path":` + quote("~"+name+"/.ssh/id_rsa") + `}`},
		{"a backslash", "read_file", `{"path":` + quote(home+`/project\..\..\.ssh/id_rsa`) + `}`},
		{"a nested field through a link", "read_nested", `{"options":{"path":` + quote(home+"/project/cfg/id_rsa") + `}}`},
		{"a list of paths", "read_many", `{"paths":[` + quote(home+"/project/notes.txt") + `,` + quote(home+"/project/cfg/id_rsa") + `]}`},
	}
	for _, c := range cases {
		out, err := callRaw(m, c.tool, c.args)
		var denied *model.DeniedError
		if !errors.As(err, &denied) || denied.Verdict.By != trust.DecidedByRule {
			got := ""
			if out != nil {
				got = sessiontest.TextOf(out.Result)
			}
			t.Errorf("%s (%s): %v, read %q; want denied by the rule", c.what, c.args, err, got)
		}
	}
}

// Spellings of a write outside ~/project against allow ~/project/** on a write tool
// whose tier asks: none may run unasked (nobody answers, so each ends by timeout),
// and ~/.bashrc is never written. What is forwarded is the raw value the person
// saw: an allowed write's server reply names the path exactly as sent.
func TestRulePaths_AttackAllowSpellings(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the spellings use Linux's limit of links")
	}
	home := attackHome(t)
	allow := sessiontest.PathRule(t, "servers.fs.tools.write_file.rules[0]", trust.Allow, home, map[string][2]any{"path": {trust.MatchGlob, "~/project/**"}})
	m, _ := sessiontest.PathFSManager(t, map[string][]trust.Rule{"write_file": {allow}})

	raw := home + "/project/./sub//../new.txt"
	if err := os.Mkdir(filepath.Join(home, "project", "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := sessiontest.CallPath(m, "write_file", map[string]string{"path": raw, "content": "hello"})
	if err != nil || out.Verdict.By != trust.DecidedByRule || sessiontest.TextOf(out.Result) != "wrote "+raw {
		t.Fatalf("a write inside the project: %v %+v, want the server to open %q as sent", err, out, raw)
	}
	cases := []struct{ what, args string }{
		{"a link whose relative target climbs", `{"path":` + quote(home+"/project/up/.bashrc") + `}`},
		{"a chain of 41 links then ..", `{"path":` + quote(home+"/project/l0/../.bashrc") + `}`},
		{"a loop of links", `{"path":` + quote(home+"/project/loop/x") + `}`},
		{"a file then /.", `{"path":` + quote(home+"/project/notes.txt/.") + `}`},
		{"a file then /..", `{"path":` + quote(home+"/project/notes.txt/../../.bashrc") + `}`},
		{"a NUL", `{"path":` + quote(home+"/project/a\x00/../../.bashrc") + `}`},
		{"a backslash", `{"path":` + quote(home+`/project/a\..\..\.bashrc`) + `}`},
		{"a number", `{"path":7}`},
		{"a list", `{"path":[` + quote(home+"/project/a") + `,` + quote(home+"/.bashrc") + `]}`},
		{"an object", `{"path":{"p":` + quote(home+"/project/a") + `}}`},
		{"a relative path", `{"path":"../.bashrc"}`},
		{"invalid UTF-8", `{"path":"` + home + "/project/\xff/../../.bashrc" + `"}`},
		{"a lone surrogate", `{"path":"` + home + `/project/\udcff/../../.bashrc"}`},
		{"~ alone", `{"path":"~"}`},
	}
	for _, c := range cases {
		args := strings.TrimSuffix(c.args, "}") + `,"content":"pwned"}`
		out, err := callRaw(m, "write_file", args)
		if err == nil && out.Verdict.By == trust.DecidedByRule {
			t.Errorf("%s (%s) ran unasked: %s", c.what, args, sessiontest.TextOf(out.Result))
		}
	}
	if got := sessiontest.FileText(t, filepath.Join(home, ".bashrc")); got != "original bashrc\n" {
		t.Errorf("~/.bashrc is now %q", got)
	}
}

// "Always allow…" for a write whose allow rule was set aside because the path opens
// elsewhere through a link: the cleaned path's folder (~/project/*) would be set
// aside again, so the proposal names the folder the path opens (~/*) and says why.
func TestRulePaths_ProposalThroughALink(t *testing.T) {
	home := sessiontest.LinkHome(t)
	allow := sessiontest.PathRule(t, "servers.fs.tools.write_file.rules[0]", trust.Allow, home, map[string][2]any{"path": {trust.MatchGlob, "~/project/**"}})
	m, a := sessiontest.PathFSManager(t, map[string][]trust.Rule{"write_file": {allow}})
	raw := home + "/project/cfg/../.bashrc"
	if _, err := sessiontest.CallPath(m, "write_file", map[string]string{"path": raw, "content": "x"}); err == nil {
		t.Fatal("the write through the link ran unasked")
	}
	var p *model.Pending
	select {
	case p = <-a.Seen:
	default:
		t.Fatal("no question was asked")
	}
	prop := approval.ProposeRule(p.Tool, p.Request.Args)
	if got, want := prop.When["path"]["glob"], home+"/*"; got != want {
		t.Errorf("proposed %v, want glob %s (the folder the path opens)", prop.When, want)
	}
	notes := strings.Join(prop.Notes, "\n")
	if !strings.Contains(notes, "opens ~/.bashrc") || !strings.Contains(notes, "~/project/cfg is a link to ~/.ssh") {
		t.Errorf("the proposal does not say why it names that folder: %q", notes)
	}
	// Through a remote server the path is not resolved: the cleaned folder.
	remote := p.Tool
	remote.Facts = &model.ServerFacts{}
	if got, want := approval.ProposeRule(remote, p.Request.Args).When["path"]["glob"], home+"/project/*"; got != want {
		t.Errorf("for a remote server proposed %v, want %s", got, want)
	}
}

// A deny rule whose own folder is a link (as /tmp is on macOS): deny
// ~/vault/** with ~/vault -> store, and a read that names ~/store/key directly (no
// link in the argument) opens the file the rule protects. It is denied; an allow
// rule on the link's folder does not allow the direct name unasked either way.
func TestRulePaths_DenyWhoseFolderIsALink(t *testing.T) {
	home := sessiontest.LinkHome(t)
	if err := os.Mkdir(filepath.Join(home, "store"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "store", "key"), []byte("VAULT KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("store", filepath.Join(home, "vault")); err != nil {
		t.Fatal(err)
	}
	deny := sessiontest.PathRule(t, "servers.fs.tools.read_file.rules[0]", trust.Deny, home, map[string][2]any{"path": {trust.MatchGlob, "~/vault/**"}})
	m, _ := sessiontest.PathFSManager(t, map[string][]trust.Rule{"read_file": {deny}})
	for _, p := range []string{home + "/vault/key", home + "/store/key", home + "/project/../store/key"} {
		out, err := sessiontest.CallPath(m, "read_file", map[string]string{"path": p})
		var denied *model.DeniedError
		if !errors.As(err, &denied) || denied.Verdict.By != trust.DecidedByRule {
			got := ""
			if out != nil {
				got = sessiontest.TextOf(out.Result)
			}
			t.Errorf("a read of %s: %v, read %q; want denied by the rule", p, err, got)
		}
	}
	if out, err := sessiontest.CallPath(m, "read_file", map[string]string{"path": home + "/project/notes.txt"}); err != nil || sessiontest.TextOf(out.Result) != "notes\n" {
		t.Errorf("a read elsewhere: %v %+v", err, out)
	}
}

// A link made while the person decides: a write to ~/project/target asks (no rule
// allows it); while the question waits, target becomes a link to
// ~/.ssh/authorized_keys, and the person allows what they saw. A matching deny is
// final, so the last look before forwarding judges the path again and denies; the
// key file is never written. (Between that look and the server's open the race
// stays: what is forwarded is the raw value the person saw, never the resolution.)
func TestRulePaths_LinkMadeWhileAsking(t *testing.T) {
	home := sessiontest.LinkHome(t)
	deny := sessiontest.PathRule(t, "servers.fs.tools.write_file.rules[0]", trust.Deny, home, map[string][2]any{"path": {trust.MatchGlob, "~/.ssh/**"}})
	m, _ := sessiontest.PathFSManager(t, map[string][]trust.Rule{"write_file": {deny}})
	keys := filepath.Join(home, ".ssh", "authorized_keys")
	target := filepath.Join(home, "project", "target")
	type result struct {
		out *session.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := sessiontest.CallPath(m, "write_file", map[string]string{"path": target, "content": "ssh-ed25519 AAAA attacker"})
		done <- result{out, err}
	}()
	var p *model.Pending
	for deadline := time.Now().Add(5 * time.Second); p == nil; time.Sleep(2 * time.Millisecond) {
		if ps := m.Engine().Pending(); len(ps) > 0 {
			p = ps[0]
		} else if time.Now().After(deadline) {
			t.Fatal("the write did not ask")
		}
	}
	if err := os.Symlink(keys, target); err != nil {
		t.Fatal(err)
	}
	if err := m.Engine().Answer(p.ID, model.Response{Answer: model.AllowOnce}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	var denied *model.DeniedError
	if !errors.As(r.err, &denied) || !strings.Contains(strings.Join(denied.Verdict.Reasons, "\n"), "rules[0]") {
		t.Errorf("the allowed write through the new link: %v %+v, want denied by the rule", r.err, r.out)
	} else if !strings.Contains(denied.Rule, "servers.fs.tools.write_file.rules[0]") {
		// The denial names the deny rule that refused it at the last look.
		t.Errorf("the denial names rule %q, want the deny rule", denied.Rule)
	}
	if got := sessiontest.FileText(t, keys); got != "" {
		t.Errorf("authorized_keys was written: %q", got)
	}
}
