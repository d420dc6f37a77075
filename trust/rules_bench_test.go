package trust

import (
	"fmt"
	"testing"
)

// BenchmarkDecideRules1000 decides one call (decoding its arguments, matching, the
// verdict) against 1,000 rules of one tool, compiled once as session keeps them (the
// worst case: every rule is the tool's): a third globs, a third host lists, a third
// equals/max, none of which match but the last. With the index (NewRuleSet) only the
// rules filed under the call's values are compared; before it every rule was. Issue 14:
// at most 50 µs.
func BenchmarkDecideRules1000(b *testing.B) {
	rules := make([]Rule, 0, 1000)
	for i := range 1000 {
		var c Cond
		var err error
		switch i % 3 {
		case 0:
			c, err = NewCond("path", MatchGlob, fmt.Sprintf("~/project%d/**", i), testHome)
		case 1:
			c, err = NewCond("url", MatchHost, []any{fmt.Sprintf("docs%d.example.org", i), fmt.Sprintf("*.site%d.dev", i)}, testHome)
		default:
			c, err = NewCond("mode", MatchEquals, fmt.Sprintf("mode%d", i), testHome)
		}
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
	last, _ := NewCond("path", MatchGlob, "~/work/**", testHome)
	rules[999], _ = NewRule("last", Allow, "", []Cond{last})
	args := []byte(`{"mode":"fast","path":"~/work/src/main.go","size":1234,"url":"https://docs.python.org/3/library/"}`)
	class := Classification{Tier: TierWrite, Action: Ask, Legs: []Leg{LegExfiltration}}
	set := NewRuleSet(rules)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a := DecodeArgs(args, testHome, nil)
		r := set.Match(a)
		v := DecideRules(class, false, Taint{}, r)
		if v.By != DecidedByRule {
			b.Fatal(v)
		}
	}
}

// BenchmarkDecideRules1000Unindexed is the worst case the index cannot help: 1,000
// rules whose only conditions are globs of wildcard segments and prefixes (compared
// with every call), none matching but the last.
func BenchmarkDecideRules1000Unindexed(b *testing.B) {
	rules := make([]Rule, 0, 1000)
	for i := range 1000 {
		var c Cond
		var err error
		if i%2 == 0 {
			c, err = NewCond("path", MatchGlob, fmt.Sprintf("**/d%d*/**", i), testHome)
		} else {
			c, err = NewCond("path", MatchPrefix, fmt.Sprintf("/opt/p%d", i), testHome)
		}
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
	last, _ := NewCond("path", MatchGlob, "**/s*/**", testHome)
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
