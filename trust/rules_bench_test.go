package trust

import (
	"fmt"
	"testing"
)

// BenchmarkDecideRules1000 decides one call (decoding its arguments, matching, the
// verdict) against 1,000 rules of one tool, compiled once as session keeps them (the
// worst case: every rule is the tool's): a third globs, a third host lists, a third
// equals/max, none of which match but the last. With the index (NewRuleSet) only the
// rules filed under the call's values are compared; before it every rule was. The
// budget for it is 50 µs.
func BenchmarkDecideRules1000(b *testing.B) {
	benchDecideRules(b, func(i int) (Cond, error) {
		switch i % 3 {
		case 0:
			return NewCond("path", MatchGlob, fmt.Sprintf("~/project%d/**", i), testHome)
		case 1:
			return NewCond("url", MatchHost, []any{fmt.Sprintf("docs%d.example.org", i), fmt.Sprintf("*.site%d.dev", i)}, testHome)
		default:
			return NewCond("mode", MatchEquals, fmt.Sprintf("mode%d", i), testHome)
		}
	}, "~/work/**")
}

// BenchmarkDecideRules1000Unindexed is the worst case the index cannot help: 1,000
// rules whose only conditions are globs of wildcard segments and prefixes (compared
// with every call), none matching but the last.
func BenchmarkDecideRules1000Unindexed(b *testing.B) {
	benchDecideRules(b, func(i int) (Cond, error) {
		if i%2 == 0 {
			return NewCond("path", MatchGlob, fmt.Sprintf("**/d%d*/**", i), testHome)
		}
		return NewCond("path", MatchPrefix, fmt.Sprintf("/opt/p%d", i), testHome)
	}, "**/s*/**")
}

// benchDecideRules decides one call against 1,000 allow rules: rule i has the
// condition cond(i) and a size max, none matching the call, but the last, which
// is replaced by one glob on path, lastGlob, that does.
func benchDecideRules(b *testing.B, cond func(i int) (Cond, error), lastGlob string) {
	rules := make([]Rule, 0, 1000)
	for i := range 1000 {
		c, err := cond(i)
		if err != nil {
			b.Fatal(err)
		}
		m, _ := NewCond("size", MatchMax, int64(1<<20), testHome)
		r, err := NewRule(fmt.Sprintf("r%d", i), Allow, "", []Cond{c, m})
		if err != nil {
			b.Fatal(err)
		}
		rules = append(rules, r)
	}
	last, _ := NewCond("path", MatchGlob, lastGlob, testHome)
	rules[999], _ = NewRule("last", Allow, "", []Cond{last})
	args := []byte(`{"mode":"fast","path":"~/work/src/main.go","size":1234,"url":"https://docs.python.org/3/library/"}`)
	class := Classification{Tier: TierWrite, Action: Ask, Legs: []Leg{LegExfiltration}}
	set := NewRuleSet(rules)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r := set.Match(DecodeArgs(args, testHome, nil))
		if v := DecideRules(class, false, Taint{}, r); v.By != DecidedByRule {
			b.Fatal(v)
		}
	}
}
