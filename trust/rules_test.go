package trust

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"testing"
)

const testHome = "/home/ann"

func mustCond(t testing.TB, field string, kind MatcherKind, v any) Cond {
	t.Helper()
	c, err := NewCond(field, kind, v, testHome)
	if err != nil {
		t.Fatalf("NewCond(%s %s %v): %v", field, kind, v, err)
	}
	return c
}

func mustRule(t testing.TB, name string, p Action, conds ...Cond) Rule {
	t.Helper()
	r, err := NewRule(name, p, "", conds)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// evalCond runs one condition against a JSON argument object.
func evalCond(c Cond, args string, real map[string]RealPath) result {
	return c.eval(DecodeArgs([]byte(args), testHome, real))
}

func TestRules_Matchers(t *testing.T) {
	cases := []struct {
		name  string
		field string
		kind  MatcherKind
		val   any
		args  string
		real  map[string]RealPath
		want  result
	}{
		// equals / one_of
		{"equals string", "mode", MatchEquals, "fast", `{"mode":"fast"}`, nil, matched},
		{"equals other string", "mode", MatchEquals, "fast", `{"mode":"Fast"}`, nil, noMatch},
		{"equals number", "n", MatchEquals, int64(5), `{"n":5.0}`, nil, matched},
		{"equals number not string", "n", MatchEquals, int64(5), `{"n":"5"}`, nil, noMatch},
		{"equals bool", "f", MatchEquals, true, `{"f":true}`, nil, matched},
		{"equals wrong type object", "mode", MatchEquals, "fast", `{"mode":{"a":1}}`, nil, unsafe},
		{"equals absent", "mode", MatchEquals, "fast", `{}`, nil, noMatch},
		{"nested dotted path", "opts.mode", MatchEquals, "fast", `{"opts":{"mode":"fast"}}`, nil, matched},
		{"dotted path through a string", "opts.mode", MatchEquals, "fast", `{"opts":"mode"}`, nil, unsafe},
		{"one_of hit", "ch", MatchOneOf, []any{"#a", "#b"}, `{"ch":"#b"}`, nil, matched},
		{"one_of miss", "ch", MatchOneOf, []any{"#a", "#b"}, `{"ch":"#c"}`, nil, noMatch},
		{"one_of array value", "ch", MatchOneOf, []any{"#a"}, `{"ch":["#a"]}`, nil, unsafe},
		// prefix
		{"prefix hit", "cmd", MatchPrefix, "npm run test", `{"cmd":"npm run test:unit"}`, nil, matched},
		{"prefix miss", "cmd", MatchPrefix, "npm run test", `{"cmd":"npm run build"}`, nil, noMatch},
		{"prefix number", "cmd", MatchPrefix, "1", `{"cmd":12}`, nil, unsafe},
		// glob
		{"glob inside", "path", MatchGlob, "~/project/**", `{"path":"/home/ann/project/a/b.go"}`, nil, matched},
		{"glob tilde value", "path", MatchGlob, "~/project/**", `{"path":"~/project/a.go"}`, nil, matched},
		{"glob the folder itself", "path", MatchGlob, "~/project/**", `{"path":"/home/ann/project"}`, nil, matched},
		{"glob dotdot escape", "path", MatchGlob, "~/project/**", `{"path":"~/project/../.ssh/id_rsa"}`, nil, noMatch},
		{"glob dotdot escape absolute", "path", MatchGlob, "~/project/**", `{"path":"/home/ann/project/../../root/x"}`, nil, noMatch},
		{"glob sibling prefix", "path", MatchGlob, "~/project/**", `{"path":"/home/ann/project-evil/x"}`, nil, noMatch},
		{"glob deny sees through dotdot", "path", MatchGlob, "**/.ssh/**", `{"path":"~/project/../.ssh/id_rsa"}`, nil, matched},
		{"glob star one segment", "path", MatchGlob, "/tmp/*.txt", `{"path":"/tmp/a.txt"}`, nil, matched},
		{"glob star not across /", "path", MatchGlob, "/tmp/*.txt", `{"path":"/tmp/d/a.txt"}`, nil, noMatch},
		{"glob relative value", "path", MatchGlob, "~/project/**", `{"path":"project/a"}`, nil, unsafe},
		{"glob backslash value", "path", MatchGlob, "~/project/**", `{"path":"/home/ann/project\\..\\..\\x"}`, nil, unsafe},
		{"glob non-string", "path", MatchGlob, "~/project/**", `{"path":["/home/ann/project/a"]}`, nil, unsafe},
		{"glob NUL", "path", MatchGlob, "~/project/**", `{"path":"/home/ann/project/a\u0000"}`, nil, unsafe},
		{"glob double slash", "path", MatchGlob, "~/project/**", `{"path":"//home/ann//project/./a"}`, nil, matched},
		{"glob link resolved inside", "path", MatchGlob, "~/project/**", `{"path":"/home/ann/project/a"}`, map[string]RealPath{"/home/ann/project/a": {Path: "/home/ann/project/b"}}, matched},
		{"glob link leads outside", "path", MatchGlob, "~/project/**", `{"path":"/home/ann/project/link/id_rsa"}`, map[string]RealPath{"/home/ann/project/link/id_rsa": {Path: "/home/ann/.ssh/id_rsa"}}, unsafePath},
		{"glob link not resolved", "path", MatchGlob, "~/project/**", `{"path":"/home/ann/project/a"}`, map[string]RealPath{}, unsafePath},
		// a link, then "..": the key is the value as the system walks it (~ expanded,
		// not cleaned), and ".." applies after the link
		{"glob link then dotdot leaves", "path", MatchGlob, "~/project/**", `{"path":"~/project/cfg/../.bashrc"}`, map[string]RealPath{"/home/ann/project/cfg/../.bashrc": {Path: "/home/ann/.bashrc", Why: "~/project/cfg is a link to ~/.ssh"}}, unsafePath},
		{"glob link then dotdot seen by a deny", "path", MatchGlob, "/home/ann/.bashrc", `{"path":"~/project/cfg/../.bashrc"}`, map[string]RealPath{"/home/ann/project/cfg/../.bashrc": {Path: "/home/ann/.bashrc"}}, unsafePath},
		{"glob deny through a link", "path", MatchGlob, "**/.ssh/**", `{"path":"~/project/cfg/id_rsa"}`, map[string]RealPath{"/home/ann/project/cfg/id_rsa": {Path: "/home/ann/.ssh/id_rsa"}}, unsafePath},
		{"glob deny not through a link", "path", MatchGlob, "**/.ssh/**", `{"path":"~/project/cfg/id_rsa"}`, map[string]RealPath{"/home/ann/project/cfg/id_rsa": {Path: "/home/ann/project/cfg/id_rsa"}}, noMatch},
		{"glob unresolvable", "path", MatchGlob, "/etc/**", `{"path":"~/project/loop/x"}`, map[string]RealPath{"/home/ann/project/loop/x": {Why: "a loop of links"}}, unsafePath},
		{"glob root through a link", "path", MatchGlob, "~/project/**", `{"path":"~/project/a"}`, map[string]RealPath{"/home/ann/project/a": {Path: "/data/ann/project/a"}, "/home/ann/project": {Path: "/data/ann/project"}}, matched},
		{"glob root through a link, value out", "path", MatchGlob, "~/project/**", `{"path":"~/project/cfg/x"}`, map[string]RealPath{"/home/ann/project/cfg/x": {Path: "/data/ann/.ssh/x"}, "/home/ann/project": {Path: "/data/ann/project"}}, unsafePath},
		{"glob root not resolved", "path", MatchGlob, "~/project/**", `{"path":"~/project/a"}`, map[string]RealPath{"/home/ann/project/a": {Path: "/data/ann/project/a"}}, unsafePath},
		{"glob double slash and dot through a link", "path", MatchGlob, "~/project/**", `{"path":"//home/ann//project/./cfg/"}`, map[string]RealPath{"//home/ann//project/./cfg/": {Path: "/home/ann/.ssh"}}, unsafePath},
		// host
		{"host exact", "url", MatchHost, []any{"docs.python.org"}, `{"url":"https://docs.python.org/3/"}`, nil, matched},
		{"host scheme optional", "url", MatchHost, "docs.python.org", `{"url":"docs.python.org/3/library"}`, nil, matched},
		{"host port", "url", MatchHost, "docs.python.org", `{"url":"http://docs.python.org:8080/"}`, nil, matched},
		{"host userinfo is not the host", "url", MatchHost, "docs.python.org", `{"url":"https://docs.python.org@evil.com/"}`, nil, noMatch},
		{"host userinfo matches the real host", "url", MatchHost, "evil.com", `{"url":"https://docs.python.org@evil.com/"}`, nil, matched},
		{"host case", "url", MatchHost, "docs.python.org", `{"url":"https://DOCS.Python.ORG/"}`, nil, matched},
		{"host trailing dot value", "url", MatchHost, "docs.python.org", `{"url":"https://docs.python.org./"}`, nil, matched},
		{"host trailing dot pattern", "url", MatchHost, "docs.python.org.", `{"url":"https://docs.python.org/"}`, nil, matched},
		{"host suffix is not the host", "url", MatchHost, "python.org", `{"url":"https://evilpython.org/"}`, nil, noMatch},
		{"host wildcard sub", "url", MatchHost, "*.go.dev", `{"url":"https://pkg.go.dev/net/url"}`, nil, matched},
		{"host wildcard deep", "url", MatchHost, "*.go.dev", `{"url":"https://a.b.go.dev/"}`, nil, matched},
		{"host wildcard not apex", "url", MatchHost, "*.go.dev", `{"url":"https://go.dev/"}`, nil, noMatch},
		{"host wildcard not suffix word", "url", MatchHost, "*.go.dev", `{"url":"https://evilgo.dev/"}`, nil, noMatch},
		{"host IDN look-alike", "url", MatchHost, "docs.python.org", `{"url":"https://dоcs.python.org/"}`, nil, noMatch},
		{"host IDN unicode pattern vs punycode value", "url", MatchHost, "bücher.example", `{"url":"https://xn--bcher-kva.example/"}`, nil, matched},
		{"host IDN punycode pattern vs unicode value", "url", MatchHost, "xn--bcher-kva.example", `{"url":"https://BÜCHER.example/"}`, nil, matched},
		{"host fullwidth dot is a dot", "url", MatchHost, "docs.python.org", `{"url":"https://docs.python．org/"}`, nil, matched},
		{"host percent escape", "url", MatchHost, "docs.python.org", `{"url":"https://docs%2Epython.org/"}`, nil, unsafe},
		{"host backslash", "url", MatchHost, "docs.python.org", `{"url":"https://evil.com\\@docs.python.org/"}`, nil, unsafe},
		{"host file scheme", "url", MatchHost, "docs.python.org", `{"url":"file:///etc/passwd"}`, nil, unsafe},
		{"host javascript", "url", MatchHost, "docs.python.org", `{"url":"javascript:alert(1)"}`, nil, unsafe},
		{"host unparsable", "url", MatchHost, "docs.python.org", `{"url":"https://[::1"}`, nil, unsafe},
		{"host number", "url", MatchHost, "docs.python.org", `{"url":42}`, nil, unsafe},
		{"host in a list", "url", MatchHost, "docs.python.org", `{"url":["https://docs.python.org/","http://127.0.0.1/"]}`, nil, unsafe},
		{"host in an object", "url", MatchHost, "docs.python.org", `{"url":{"href":"http://127.0.0.1/","host":"docs.python.org"}}`, nil, unsafe},
		{"host null", "url", MatchHost, "docs.python.org", `{"url":null}`, nil, unsafe},
		{"host empty", "url", MatchHost, "docs.python.org", `{"url":""}`, nil, unsafe},
		{"host ip", "url", MatchHost, "127.0.0.1", `{"url":"http://127.0.0.1:9/"}`, nil, matched},
		// max
		{"max number under", "n", MatchMax, int64(10), `{"n":10}`, nil, matched},
		{"max number over", "n", MatchMax, int64(10), `{"n":10.5}`, nil, noMatch},
		{"max string length in characters", "s", MatchMax, int64(3), `{"s":"äöü"}`, nil, matched},
		{"max string too long", "s", MatchMax, int64(3), `{"s":"abcd"}`, nil, noMatch},
		{"max array length", "s", MatchMax, int64(2), `{"s":[1,2,3]}`, nil, noMatch},
		{"max bool", "s", MatchMax, int64(2), `{"s":true}`, nil, unsafe},
		{"max huge number", "n", MatchMax, int64(10), `{"n":1e400}`, nil, unsafe},
		// arguments that are not an object
		{"args not an object", "n", MatchMax, int64(10), `[1]`, nil, unsafe},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustCond(t, tc.field, tc.kind, tc.val)
			if got := evalCond(c, tc.args, tc.real); got != tc.want {
				t.Errorf("%s %s %v on %s = %v, want %v", tc.field, tc.kind, tc.val, tc.args, got, tc.want)
			}
		})
	}
}

func TestRules_BadConditions(t *testing.T) {
	cases := []struct {
		field string
		kind  MatcherKind
		val   any
		want  string
	}{
		{"path", MatchGlob, 5, "glob takes a string"},
		{"path", MatchGlob, "project/**", "absolute"},
		{"path", MatchGlob, "~/project/../.ssh/**", ". or .."},
		{"path", MatchGlob, "/a/b**", "whole path segment"},
		{"path", MatchGlob, "/a/[", "malformed"},
		{"url", MatchHost, "evil*.com", "not a host name"},
		{"url", MatchHost, []any{"ok.com", 3}, "host name or a list"},
		{"url", MatchHost, "https://ok.com/", "not a host name"},
		{"n", MatchMax, "ten", "max takes a number"},
		{"n", MatchMax, int64(-1), "max takes a number"},
		{"n", MatchEquals, []any{"a"}, "equals takes"},
		{"n", MatchOneOf, []any{}, "non-empty list"},
		{"n", "regex", ".*", "unknown matcher"},
		{"a..b", MatchEquals, "x", "dotted path"},
		{"", MatchEquals, "x", "dotted path"},
	}
	for _, tc := range cases {
		_, err := NewCond(tc.field, tc.kind, tc.val, testHome)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewCond(%q %s %v) = %v, want an error with %q", tc.field, tc.kind, tc.val, err, tc.want)
		}
	}
	if _, err := NewCond("p", MatchGlob, "~/x/**", ""); err == nil {
		t.Error("a ~ glob without a home folder was accepted")
	}
	if _, err := NewRule("r", ActionUnset, "", nil); err == nil {
		t.Error("a rule without a policy was accepted")
	}
}

func TestRules_Precedence(t *testing.T) {
	project := func(p Action) Rule {
		return mustRule(t, "project-"+p.String(), p, mustCond(t, "path", MatchGlob, "~/project/**"))
	}
	ssh := mustRule(t, "ssh", Deny, mustCond(t, "path", MatchGlob, "**/.ssh/**"))
	exactAllow := mustRule(t, "exact", Allow, mustCond(t, "path", MatchEquals, "/home/ann/.ssh/config"))
	two := mustRule(t, "two", Ask, mustCond(t, "path", MatchGlob, "~/project/**"), mustCond(t, "size", MatchMax, int64(10)))
	twoAllow := mustRule(t, "two-allow", Allow, mustCond(t, "path", MatchGlob, "~/project/**"), mustCond(t, "size", MatchMax, int64(10)))
	homeSized := mustRule(t, "home-sized", Allow, mustCond(t, "path", MatchGlob, "~/**"), mustCond(t, "content", MatchMax, int64(100000)))
	exactProject := mustRule(t, "exact-project", Allow, mustCond(t, "path", MatchEquals, "/home/ann/project/a"))
	cases := []struct {
		name  string
		rules []Rule
		args  string
		want  string
	}{
		{"allow alone", []Rule{project(Allow)}, `{"path":"~/project/a"}`, "project-allow"},
		{"deny beats allow at equal specificity", []Rule{project(Allow), ssh}, `{"path":"~/project/.ssh/id_rsa"}`, "ssh"},
		{"order does not matter", []Rule{ssh, project(Allow)}, `{"path":"~/project/.ssh/id_rsa"}`, "ssh"},
		{"ask beats allow", []Rule{project(Allow), project(Ask)}, `{"path":"~/project/a"}`, "project-ask"},
		{"deny beats ask", []Rule{project(Ask), project(Deny)}, `{"path":"~/project/a"}`, "project-deny"},
		{"first listed among identical", []Rule{mustRule(t, "first", Allow, mustCond(t, "path", MatchGlob, "/**")), mustRule(t, "second", Allow, mustCond(t, "path", MatchGlob, "/**"))}, `{"path":"/x"}`, "first"},
		{"a deny outranks an exact allow", []Rule{ssh, exactAllow}, `{"path":"/home/ann/.ssh/config"}`, "ssh"},
		{"a deny outranks an allow with more conditions", []Rule{homeSized, ssh}, `{"path":"~/.ssh/authorized_keys","content":"ssh-ed25519 AAAA"}`, "ssh"},
		{"the allow with more conditions where no deny matches", []Rule{homeSized, ssh}, `{"path":"~/notes","content":"x"}`, "home-sized"},
		{"an ask outranks an exact allow", []Rule{exactAllow, mustRule(t, "ask-all", Ask)}, `{"path":"/home/ann/.ssh/config"}`, "ask-all"},
		{"exact beats pattern of the same effect", []Rule{project(Allow), exactProject}, `{"path":"/home/ann/project/a"}`, "exact-project"},
		{"more conditions beat fewer of the same effect", []Rule{project(Ask), two}, `{"path":"~/project/a","size":3}`, "two"},
		{"an ask outranks an allow with more conditions", []Rule{twoAllow, project(Ask)}, `{"path":"~/project/a","size":3}`, "project-ask"},
		{"no match", []Rule{project(Allow)}, `{"path":"/etc/passwd"}`, ""},
		{"escape never allowed", []Rule{project(Allow)}, `{"path":"~/project/../.ssh/id_rsa"}`, ""},
		{"unsafe value never allows", []Rule{project(Allow)}, `{"path":7}`, ""},
		{"unsafe value still denies", []Rule{project(Allow), ssh}, `{"path":7}`, "ssh"},
		{"absent field matches nothing", []Rule{project(Allow), ssh}, `{}`, ""},
		{"empty when matches every call", []Rule{mustRule(t, "all", Ask)}, `{"x":1}`, "all"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := MatchRules(tc.rules, DecodeArgs([]byte(tc.args), testHome, nil))
			name := ""
			if got != nil {
				name = got.Name
			}
			if name != tc.want {
				t.Errorf("MatchRules on %s = %q, want %q", tc.args, name, tc.want)
			}
		})
	}
}

func TestRules_NeverOutrankSafety(t *testing.T) {
	allow := mustRule(t, "servers.web.tools.fetch.rules[0] (line 3)", Allow)
	ask := mustRule(t, "r-ask", Ask)
	deny := mustRule(t, "r-deny", Deny)
	exfil := Classification{Tier: TierWrite, Legs: []Leg{LegUntrustedContent, LegExfiltration}, Action: Ask, Reasons: []string{"policy asks"}}
	read := Classification{Tier: TierRead, Action: Allow, Reasons: []string{"policy allows"}}
	blocked := Classification{Tier: TierBlocked, Action: Deny, Reasons: []string{"definition changed since pinned; review it before use"}}
	tainted := Taint{By: Ref{Server: "web", Tool: "fetch"}}
	cases := []struct {
		name    string
		c       Classification
		granted bool
		taint   Taint
		rule    *Rule
		action  Action
		by      DecidedBy
		reason  string
	}{
		{"allow rule lets an asking tool run", exfil, false, Taint{}, &allow, Allow, DecidedByRule, "rule servers.web.tools.fetch.rules[0] (line 3) allows this call"},
		{"taint on exfiltration still asks", exfil, false, tainted, &allow, Ask, DecidedByTaint, "would have allowed this call"},
		{"blocked stays denied", blocked, false, Taint{}, &allow, Deny, DecidedByPolicy, "would have allowed this call"},
		{"deny rule", read, false, Taint{}, &deny, Deny, DecidedByRule, "rule r-deny denies"},
		{"deny rule beats grant", exfil, true, Taint{}, &deny, Deny, DecidedByRule, "r-deny"},
		{"ask rule beats grant", exfil, true, Taint{}, &ask, Ask, DecidedByRule, "r-ask asks"},
		{"ask rule on a read tool", read, false, Taint{}, &ask, Ask, DecidedByRule, "r-ask"},
		{"no rule is Decide", exfil, false, Taint{}, nil, Ask, DecidedByPolicy, "policy asks"},
		{"grant then allow rule: grant", exfil, true, Taint{}, &allow, Allow, DecidedByGrant, ReasonGranted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := DecideRules(tc.c, tc.granted, tc.taint, tc.rule)
			if v.Action != tc.action || v.By != tc.by || !strings.Contains(strings.Join(v.Reasons, "|"), tc.reason) {
				t.Errorf("got %v by %s %q; want %v by %s with %q", v.Action, v.By, v.Reasons, tc.action, tc.by, tc.reason)
			}
		})
	}
}

func FuzzRuleMatchers(f *testing.F) {
	for _, s := range []string{`{"path":"~/project/../.ssh/id_rsa","url":"https://docs.python.org@evil.com"}`, `{"url":"xn--bcher-kva.example.","n":3}`, `{"path":"/home/ann/project/a"}`, `[]`, `{"path":{"a":1}}`} {
		f.Add([]byte(s))
	}
	allow := []Rule{
		mustRule(f, "glob", Allow, mustCond(f, "path", MatchGlob, "~/project/**")),
		mustRule(f, "host", Allow, mustCond(f, "url", MatchHost, []any{"docs.python.org", "*.go.dev"})),
		mustRule(f, "max", Allow, mustCond(f, "n", MatchMax, int64(5))),
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		canon, err := CanonicalArgs(data, 1<<20)
		if err != nil {
			return
		}
		a := DecodeArgs(canon, testHome, nil)
		r := MatchRules(allow, a)
		if r == nil {
			return
		}
		// whatever matched, the property each allow rule promises holds
		switch r.Name {
		case "glob":
			v, _, _ := a.field([]string{"path"})
			p, ok := styleFor("linux").clean(fmt.Sprint(v), testHome)
			if !ok || (p != "/home/ann/project" && !strings.HasPrefix(p, "/home/ann/project/")) || strings.Contains(p, "/../") {
				t.Fatalf("glob allowed %q (%q)", v, p)
			}
		case "host":
			v, _, _ := a.field([]string{"url"})
			h, ok := URLHost(fmt.Sprint(v))
			if !ok || (h != "docs.python.org" && !strings.HasSuffix(h, ".go.dev")) {
				t.Fatalf("host allowed %q (%q)", v, h)
			}
		}
	})
}

func TestRules_CheckRuleFields(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"},"opts":{"type":"object","properties":{"mode":{"type":["string","null"]}}}}}`)
	cases := []struct {
		cond Cond
		want string
	}{
		{mustCond(t, "path", MatchGlob, "/x/**"), ""},
		{mustCond(t, "opts.mode", MatchEquals, "fast"), ""},
		{mustCond(t, "n", MatchMax, int64(3)), ""},
		{mustCond(t, "pth", MatchGlob, "/x/**"), `declares no field "pth"`},
		{mustCond(t, "opts.speed", MatchEquals, "x"), `declares no field "opts.speed"`},
		{mustCond(t, "n", MatchHost, "a.com"), "declares n as integer, which host cannot compare"},
		{mustCond(t, "path", MatchEquals, true), "declares path as string, which equals cannot compare"},
	}
	for _, tc := range cases {
		r := mustRule(t, "r", Allow, tc.cond)
		got := strings.Join(CheckRuleFields(&r, schema), "|")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s %s: %q, want %q", tc.cond.Field, tc.cond.Kind, got, tc.want)
		}
	}
}

// A leg counts as guarded only where no allow rule lets it run unasked;
// the hazard names the rule.
func TestRules_HazardUnguardedByAllowRule(t *testing.T) {
	fetch := Assessed{Ref: Ref{Server: "web", Tool: "fetch"}, Class: Classification{Tier: TierRead, Action: Allow, Legs: []Leg{LegUntrustedContent}}}
	post := Assessed{Ref: Ref{Server: "chat", Tool: "post"}, Class: Classification{Tier: TierWrite, Action: Ask, Legs: []Leg{LegExfiltration}}}
	find := func(hs []Hazard) Hazard {
		for _, h := range hs {
			if h.Kind == HazardOpenWorldExfiltration {
				return h
			}
		}
		t.Fatal("no open-world-exfiltration hazard")
		return Hazard{}
	}
	if h := find(Hazards([]Assessed{fetch, post})); h.Unguarded || h.Rules != nil {
		t.Errorf("without a rule: unguarded %v rules %v", h.Unguarded, h.Rules)
	}
	post.AllowRule = "servers.chat.tools.post.rules[0] (config.toml:9)"
	h := find(Hazards([]Assessed{fetch, post}))
	if !h.Unguarded || len(h.Rules) != 1 || h.Rules[0] != "chat__post: rule servers.chat.tools.post.rules[0] (config.toml:9)" {
		t.Errorf("with an allow rule: unguarded %v rules %q", h.Unguarded, h.Rules)
	}
}

// linkModel is a small file tree held in memory for FuzzRulesThroughLinks: folders,
// files and symbolic links (absolute path → target as written).
type linkModel struct {
	dirs, files map[string]bool
	links       map[string]string
}

// resolve is how a POSIX kernel opens p in the model (written apart from
// session's walk, recursively: a link's target is resolved whole before the next
// component); names after a missing one are kept, ".." taking them back. ok is
// false for a loop or a dangling link.
func (m linkModel) resolve(p string, depth int) (string, bool) {
	if depth > 40 {
		return "", false
	}
	cur, virtual := "/", 0
	for _, c := range strings.Split(p, "/") {
		switch {
		case c == "" || c == ".":
			continue
		case c == "..":
			cur = path.Dir(cur)
			if virtual > 0 {
				virtual--
			}
			continue
		}
		next := path.Join(cur, c)
		switch t, isLink := m.links[next]; {
		case virtual > 0:
			cur, virtual = next, virtual+1
		case isLink:
			if !strings.HasPrefix(t, "/") {
				t = cur + "/" + t
			}
			r, ok := m.resolve(t, depth+1)
			if !ok || !m.dirs[r] && !m.files[r] {
				return "", false
			}
			cur = r
		case m.dirs[next] || m.files[next]:
			cur = next
		default:
			cur, virtual = next, 1
		}
	}
	return cur, true
}

// FuzzRulesThroughLinks: for a random tree of links (under a HOME that is itself a
// link, /home/ann -> /data/ann), allow ~/project/** never matches a path whose
// resolution lands outside ~/project, and deny **/.ssh/** decides every path that
// lands in ~/.ssh, whatever "..", "//" and "." the path has.
func FuzzRulesThroughLinks(f *testing.F) {
	for _, s := range [][]byte{{0, 1, 2, 0, 2, 7, 9}, {1, 1, 1, 0, 4, 7, 5}, {3, 4, 5, 0, 3, 8, 9, 1}} {
		f.Add(s)
	}
	targets := []string{"../.ssh", "sub", "..", "/data/ann/.ssh", "l1", "/home/ann/project/sub", "missing", "../project", "l0"}
	comps := []string{"project", "sub", "l0", "l1", "l2", ".ssh", "..", ".", "", "f", "missing"}
	rules := []Rule{
		mustRule(f, "allow", Allow, mustCond(f, "path", MatchGlob, "~/project/**")),
		mustRule(f, "deny", Deny, mustCond(f, "path", MatchGlob, "**/.ssh/**")),
	}
	set := NewRuleSet(rules)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 || len(data) > 20 {
			return
		}
		m := linkModel{
			dirs:  map[string]bool{"/": true, "/home": true, "/data": true, "/data/ann": true, "/data/ann/project": true, "/data/ann/project/sub": true, "/data/ann/.ssh": true},
			files: map[string]bool{"/data/ann/.ssh/id_rsa": true, "/data/ann/.bashrc": true},
			links: map[string]string{"/home/ann": "/data/ann"},
		}
		for i := range 3 {
			m.links["/data/ann/project/l"+string(rune('0'+i))] = targets[int(data[i])%len(targets)]
		}
		var parts []string
		for _, b := range data[3:] {
			parts = append(parts, comps[int(b)%len(comps)])
		}
		raw := "~/" + strings.Join(parts, "/")
		open := "/home/ann/" + strings.Join(parts, "/")
		real := map[string]RealPath{}
		r, ok := m.resolve(open, 0)
		if ok {
			real[open] = RealPath{Path: r, Why: "model"}
		} else {
			real[open] = RealPath{Why: "loop or dangling"}
		}
		root, _ := m.resolve("/home/ann/project", 0)
		real["/home/ann/project"] = RealPath{Path: root}
		args, _ := json.Marshal(map[string]string{"path": raw})
		got := set.Match(DecodeArgsFor("linux", args, testHome, real))
		if want := scanMatch(rules, DecodeArgsFor("linux", args, testHome, real)); got != want {
			t.Fatalf("%s: index picked %v, scan %v", raw, name(got), name(want))
		}
		inside := func(dir string) bool { return r == dir || strings.HasPrefix(r, dir+"/") }
		if got != nil && got.Policy == Allow && (!ok || !inside("/data/ann/project")) {
			t.Fatalf("%s opens %q (ok %v), allowed by ~/project/**", raw, r, ok)
		}
		if ok && inside("/data/ann/.ssh") && (got == nil || got.Policy != Deny) {
			t.Fatalf("%s opens %q, inside ~/.ssh, decided by %v", raw, r, name(got))
		}
	})
}

// The sentences that say where a path's resolution changed the outcome: an allow
// rule set aside (named, with where the path opens and why), and the deny that
// holds through a link; none where the link changes nothing or the rule would
// not have matched anyway.
func TestRules_PathNotes(t *testing.T) {
	allow := mustRule(t, "allow-project", Allow, mustCond(t, "path", MatchGlob, "~/project/**"))
	allowSmall := mustRule(t, "allow-small", Allow, mustCond(t, "path", MatchGlob, "~/project/**"), mustCond(t, "n", MatchMax, int64(1)))
	deny := mustRule(t, "deny-ssh", Deny, mustCond(t, "path", MatchGlob, "**/.ssh/**"))
	link := map[string]RealPath{"/home/ann/project/cfg/../.bashrc": {Path: "/home/ann/.bashrc", Why: "~/project/cfg is a link to ~/.ssh"}}
	key := map[string]RealPath{"/home/ann/project/cfg/id_rsa": {Path: "/home/ann/.ssh/id_rsa", Why: "~/project/cfg is a link to ~/.ssh"}}
	loop := map[string]RealPath{"/home/ann/project/l/x": {Why: "a loop of links at ~/project/l"}}
	cases := []struct {
		name  string
		rules []Rule
		args  string
		real  map[string]RealPath
		want  string
		notes string
	}{
		{"allow set aside", []Rule{allow}, `{"path":"~/project/cfg/../.bashrc"}`, link, "", "rule allow-project does not apply: path ~/project/cfg/../.bashrc opens ~/.bashrc (~/project/cfg is a link to ~/.ssh)"},
		{"deny through a link", []Rule{allow, deny}, `{"path":"~/project/cfg/id_rsa"}`, key, "deny-ssh", "rule allow-project does not apply: path ~/project/cfg/id_rsa opens ~/.ssh/id_rsa (~/project/cfg is a link to ~/.ssh)|path ~/project/cfg/id_rsa opens ~/.ssh/id_rsa (~/project/cfg is a link to ~/.ssh)"},
		{"unresolvable", []Rule{allow}, `{"path":"~/project/l/x"}`, loop, "", "rule allow-project does not apply: path ~/project/l/x cannot be resolved safely (a loop of links at ~/project/l)"},
		{"unresolvable meets a deny", []Rule{deny}, `{"path":"~/project/l/x"}`, loop, "deny-ssh", "path ~/project/l/x cannot be resolved safely (a loop of links at ~/project/l)"},
		{"would not have matched anyway", []Rule{allowSmall}, `{"path":"~/project/cfg/../.bashrc","n":5}`, link, "", ""},
		{"no link", []Rule{allow}, `{"path":"~/project/a"}`, map[string]RealPath{"/home/ann/project/a": {Path: "/home/ann/project/a"}}, "allow-project", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, notes := MatchRuleSetsNoting(DecodeArgs([]byte(tc.args), testHome, tc.real), NewRuleSet(tc.rules))
			got := ""
			if r != nil {
				got = r.Name
			}
			if got != tc.want || strings.Join(notes, "|") != tc.notes {
				t.Errorf("%s: %q with notes\n%q\nwant %q with\n%q", tc.args, got, strings.Join(notes, "|"), tc.want, tc.notes)
			}
		})
	}
}

// The config's rules and the remembered ones are one list for precedence: a
// remembered allow, however exact, never outranks a config deny, and a remembered
// deny outranks a config allow with more conditions. A rule with several
// conditions, one of which cannot be compared safely, never allows and still
// denies when its other conditions match (and only then).
func TestRules_PrecedenceAcrossSetsAndConditions(t *testing.T) {
	ssh := mustRule(t, "config-ssh", Deny, mustCond(t, "path", MatchGlob, "~/.ssh/**"))
	remAllow := mustRule(t, "r-exact", Allow, mustCond(t, "path", MatchEquals, "/home/ann/.ssh/authorized_keys"))
	remDeny := mustRule(t, "r-deny", Deny, mustCond(t, "path", MatchGlob, "~/project/secret/**"))
	sized := mustRule(t, "config-sized", Allow, mustCond(t, "path", MatchGlob, "~/project/**"), mustCond(t, "content", MatchMax, int64(100)))
	readSSH := mustRule(t, "config-read-ssh", Deny, mustCond(t, "path", MatchGlob, "~/.ssh/**"), mustCond(t, "mode", MatchEquals, "r"))
	config, remembered := NewRuleSet([]Rule{ssh, sized}), NewRuleSet([]Rule{remAllow, remDeny})
	modes := NewRuleSet([]Rule{readSSH, sized})
	cases := []struct {
		name string
		sets []*RuleSet
		args string
		want string
	}{
		{"a remembered exact allow under a config deny", []*RuleSet{config, remembered}, `{"path":"/home/ann/.ssh/authorized_keys"}`, "config-ssh"},
		{"the same with the remembered set first", []*RuleSet{remembered, config}, `{"path":"/home/ann/.ssh/authorized_keys"}`, "config-ssh"},
		{"a remembered deny over a config allow with more conditions", []*RuleSet{config, remembered}, `{"path":"~/project/secret/k","content":"x"}`, "r-deny"},
		{"the config allow elsewhere", []*RuleSet{config, remembered}, `{"path":"~/project/a","content":"x"}`, "config-sized"},
		{"an allow whose other condition cannot be compared", []*RuleSet{config}, `{"path":"~/project/a","content":{"x":1}}`, ""},
		{"a deny whose other condition cannot be compared", []*RuleSet{modes}, `{"path":"~/.ssh/id_rsa","mode":["r"]}`, "config-read-ssh"},
		{"a deny whose path condition misses", []*RuleSet{modes}, `{"path":"~/notes","mode":["r"]}`, ""},
		{"a deny whose other condition misses", []*RuleSet{modes}, `{"path":"~/.ssh/id_rsa","mode":"w"}`, ""},
	}
	for _, tc := range cases {
		got := MatchRuleSets(DecodeArgs([]byte(tc.args), testHome, nil), tc.sets...)
		name := ""
		if got != nil {
			name = got.Name
		}
		if name != tc.want {
			t.Errorf("%s: %s matched %q, want %q", tc.name, tc.args, name, tc.want)
		}
	}
}
