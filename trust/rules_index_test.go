package trust

import (
	"fmt"
	"math/rand/v2"
	"path"
	"testing"
)

// scanMatch is MatchRules without the index: every rule compared, in order. The
// index must never change which rule decides.
func scanMatch(rules []Rule, a Args) *Rule {
	var best *Rule
rules:
	for i := range rules {
		r := &rules[i]
		if best != nil && !moreSpecific(r, best) {
			continue
		}
		for j := range r.When {
			switch r.When[j].eval(a) {
			case noMatch:
				continue rules
			case unsafe, unsafePath:
				if r.Policy == Allow {
					continue rules
				}
			}
		}
		best = r
	}
	return best
}

// The rule index (equals values, hosts and parent domains,
// literal glob prefixes; every deny and ask rule of a field whose value cannot be
// compared) picks the same rule as comparing every rule, for random rule sets and
// calls that include wrong types, bad URLs, relative paths, absent fields, -0 and
// escapes.
func TestRules_IndexAgreesWithScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 2))
	conds := []func() (string, MatcherKind, any){
		func() (string, MatcherKind, any) {
			return "mode", MatchEquals, []any{"fast", "slow", int64(0), true}[rng.IntN(4)]
		},
		func() (string, MatcherKind, any) { return "mode", MatchOneOf, []any{"fast", int64(5), false} },
		func() (string, MatcherKind, any) {
			return "n", MatchEquals, []any{int64(0), 2.5, int64(7)}[rng.IntN(3)]
		},
		func() (string, MatcherKind, any) {
			return "url", MatchHost, []any{[]any{"docs.python.org"}, []any{"*.go.dev"}, []any{"a.b.example.org", "*.example.org"}, "go.dev"}[rng.IntN(4)]
		},
		func() (string, MatcherKind, any) {
			return "path", MatchGlob, []any{"~/project/**", "/srv/*/x", "**/.ssh/**", "/srv/project/*.txt", "/", "~/**", "/srv/[ab]*/**", "**/project/*/x", "**/*/.ssh"}[rng.IntN(9)]
		},
		func() (string, MatcherKind, any) { return "path", MatchPrefix, "/srv" },
		func() (string, MatcherKind, any) { return "size", MatchMax, int64(10) },
		func() (string, MatcherKind, any) { return "opts.mode", MatchEquals, "x" },
	}
	argsList := []string{
		`{}`, `null`, `[]`,
		`{"mode":"fast","url":"https://docs.python.org/3/","path":"~/project/a","size":3}`,
		`{"mode":"slow","url":"https://pkg.go.dev/x","path":"/srv/project/a.txt"}`,
		`{"mode":5,"url":"go.dev","path":"~/project/../.ssh/id_rsa"}`,
		`{"mode":false,"url":"https://docs.python.org@evil.com/","path":"relative/x"}`,
		`{"mode":["fast"],"url":7,"path":5,"size":"a long string here"}`,
		`{"mode":0,"n":-0,"url":"https://x.a.b.example.org.","path":"/srv/b1/x"}`,
		`{"mode":true,"n":2.5,"url":"javascript:alert(1)","path":"/srv/a/x"}`,
		`{"n":7.0,"url":"https://EXAMPLE.org","path":"/","opts":{"mode":"x"}}`,
		`{"opts":"x","path":"/home/ann"}`,
		`{"opts":{"mode":"y"},"path":"/home/ann/.ssh/k","url":"https://a.go.dev:443/"}`,
		`{"path":"/srv/project/\u0000","url":"https://dоcs.python.org/"}`,
	}
	for round := range 400 {
		var rules []Rule
		for i := range 1 + rng.IntN(12) {
			var cs []Cond
			for range 1 + rng.IntN(3) {
				f, k, v := conds[rng.IntN(len(conds))]()
				c, err := NewCond(f, k, v, testHome)
				if err != nil {
					t.Fatal(err)
				}
				cs = append(cs, c)
			}
			r, err := NewRule(fmt.Sprintf("r%d", i), []Action{Allow, Ask, Deny}[rng.IntN(3)], "", cs)
			if err != nil {
				t.Fatal(err)
			}
			rules = append(rules, r)
		}
		set := NewRuleSet(rules)
		for _, args := range argsList {
			// as cleaned only (a remote server), and for a server on this machine
			// with the path opening where it is written, in ~/.ssh through a link,
			// under /srv through a link, or nowhere safe
			for _, to := range []*RealPath{nil, {Path: ""}, {Path: "/home/ann/.ssh/k"}, {Path: "/srv/b1/x"}, {Why: "a loop"}} {
				var real map[string]RealPath
				if to != nil {
					real = map[string]RealPath{}
					v, _, _ := DecodeArgs([]byte(args), testHome, nil).field([]string{"path"})
					if s, ok := v.(string); ok {
						if open, ok := hostStyle.openPath(s, testHome); ok {
							rp := *to
							if rp.Path == "" && rp.Why == "" {
								rp.Path, _ = hostStyle.clean(s, testHome)
							}
							real[open] = rp
						}
					}
				}
				a := DecodeArgs([]byte(args), testHome, real)
				want, got := scanMatch(rules, a), set.Match(DecodeArgs([]byte(args), testHome, real))
				if want != got {
					t.Fatalf("round %d, %s, real %v: index picked %v, scan %v\nrules %+v", round, args, real, name(got), name(want), rules)
				}
			}
		}
	}
}

func name(r *Rule) string {
	if r == nil {
		return "none"
	}
	return r.Name + " " + r.Policy.String()
}

// segMatch's shortcuts mean what path.Match means.
func TestRules_SegMatchAgreesWithPathMatch(t *testing.T) {
	pats := []string{"*", "a*", "*a", "ab*", "*.go", "a*b", "?a*", "[ab]*", "*a*", "*", "ab", "a?"}
	segs := []string{"", "a", "b", "ab", "ba", "abc", "x.go", ".go", "a*", "*a", "aXb", "é", "a.b"}
	for _, p := range pats {
		for _, s := range segs {
			want, _ := path.Match(p, s)
			if got := segMatch(shapesOf([]string{p})[0], p, s); got != want {
				t.Errorf("segMatch(%q, %q) = %v, path.Match says %v", p, s, got, want)
			}
		}
	}
}
