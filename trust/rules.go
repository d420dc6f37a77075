package trust

import (
	"bytes"
	"encoding/json"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MatcherKind names how a rule condition compares an argument value.
type MatcherKind string

// The matchers (docs/rules.md).
const (
	MatchEquals MatcherKind = "equals"
	MatchOneOf  MatcherKind = "one_of"
	MatchGlob   MatcherKind = "glob"
	MatchPrefix MatcherKind = "prefix"
	MatchHost   MatcherKind = "host"
	MatchMax    MatcherKind = "max"
)

// MatcherKinds lists every matcher in the order docs/rules.md gives them.
var MatcherKinds = []MatcherKind{MatchEquals, MatchOneOf, MatchGlob, MatchPrefix, MatchHost, MatchMax}

// Cond is one condition of a rule: the argument at Field (a dotted path into the
// argument object) compared by one matcher. Build it with NewCond, which checks and
// compiles the pattern.
type Cond struct {
	Field string
	Kind  MatcherKind
	// Values are the matcher's operands as JSON scalars (equals: one; one_of: several;
	// glob, prefix: one string, a glob with ~ already expanded; host: the host
	// patterns; max: one number).
	Values []any

	path      []string
	glob      []string // glob: cleaned pattern segments
	globLower []string // glob, where names are case-insensitive: glob in lower case
	lit       []bool   // glob: the segment has no wildcard (compared with ==)
	shape     []byte   // glob: each segment's shape (shapesOf)
	root      string   // glob: its literal leading folder (globRoot), "" when none
	rootN     int      // glob: how many segments root has
	style     pathStyle
	hosts     []hostPattern
	max       number
	scalar    []scalar // equals, one_of
}

type hostPattern struct {
	wildcard bool   // "*." prefix: any subdomain, not the domain itself
	host     string // ASCII, lower case, no trailing dot
	suffix   string // "." + host, for a wildcard
}

type scalar struct {
	kind byte // 's' string, 'n' number, 'b' bool
	s    string
	num  number
	b    bool
}

// Rule is one argument-aware rule of a tool: when every condition matches, Policy
// decides the call (docs/rules.md).
type Rule struct {
	// Name identifies the rule in every sentence: the config key with its line
	// ("servers.web.tools.fetch_url.rules[1] (line 12)") or the rules file's id.
	Name string
	// Source is where the rule was written (config.toml:12, rules.toml), for
	// sentences; "" when not known.
	Source string
	When   []Cond
	Policy Action
	Reason string
	// Broken is set on the ask rule BrokenRule makes in place of a rule that can
	// never match: it decides, but it matched nothing, and a RuleSet leaves it out.
	Broken bool

	exact int // conditions matching exact values (equals, one_of, host without "*.")
}

// NewRule checks a rule: a policy of allow, ask or deny, and conditions built by
// NewCond. Conditions are sorted by field so that equal rules compare equal.
func NewRule(name string, policy Action, reason string, when []Cond) (Rule, error) {
	if policy != Allow && policy != Ask && policy != Deny {
		return Rule{}, ruleError("policy must be allow, ask or deny")
	}
	r := Rule{Name: name, Policy: policy, Reason: reason, When: slices.Clone(when)}
	slices.SortStableFunc(r.When, func(a, b Cond) int { return strings.Compare(a.Field, b.Field) })
	for _, c := range r.When {
		if c.exactMatch() {
			r.exact++
		}
	}
	return r, nil
}

type ruleError string

func (e ruleError) Error() string { return string(e) }

func (c Cond) exactMatch() bool {
	switch c.Kind {
	case MatchEquals, MatchOneOf:
		return true
	case MatchHost:
		for _, h := range c.hosts {
			if h.wildcard {
				return false
			}
		}
		return true
	}
	return false
}

// NewCond checks and compiles one condition. values are the matcher's operands as the
// config decoded them (string, int64, float64, bool, or a list of those); home
// expands a leading "~" in a glob (trust reads no environment).
func NewCond(field string, kind MatcherKind, value any, home string) (Cond, error) {
	return NewCondFor(runtime.GOOS, field, kind, value, home)
}

// NewCondFor is NewCond for the paths of operating system goos (a glob's
// separators, drive letters and case: see paths.go).
func NewCondFor(goos, field string, kind MatcherKind, value any, home string) (Cond, error) {
	c := Cond{Field: field, Kind: kind, style: styleFor(goos)}
	if field == "" || strings.HasPrefix(field, ".") || strings.HasSuffix(field, ".") || strings.Contains(field, "..") {
		return Cond{}, ruleError("the field " + strconv.Quote(field) + " is not a dotted path of argument names")
	}
	c.path = strings.Split(field, ".")
	switch kind {
	case MatchEquals:
		s, ok := toScalar(value)
		if !ok {
			return Cond{}, ruleError("equals takes a string, number or boolean")
		}
		c.scalar, c.Values = []scalar{s}, []any{value}
	case MatchOneOf:
		list, ok := value.([]any)
		if !ok || len(list) == 0 {
			return Cond{}, ruleError("one_of takes a non-empty list of strings, numbers or booleans")
		}
		for _, v := range list {
			s, ok := toScalar(v)
			if !ok {
				return Cond{}, ruleError("one_of takes a non-empty list of strings, numbers or booleans")
			}
			c.scalar = append(c.scalar, s)
		}
		c.Values = list
	case MatchGlob:
		p, ok := value.(string)
		if !ok {
			return Cond{}, ruleError("glob takes a string")
		}
		segs, err := c.style.compileGlob(p, home)
		if err != nil {
			return Cond{}, err
		}
		c.glob, c.Values = segs, []any{p}
		if c.style.fold {
			c.globLower = lowerAll(segs)
		}
		c.shape = shapesOf(segs)
		for _, sh := range c.shape {
			c.lit = append(c.lit, sh == segLiteral)
		}
		c.root, c.rootN = globRoot(segs, c.lit)
	case MatchPrefix:
		p, ok := value.(string)
		if !ok || p == "" {
			return Cond{}, ruleError("prefix takes a non-empty string")
		}
		c.Values = []any{p}
	case MatchHost:
		var list []any
		switch v := value.(type) {
		case string:
			list = []any{v}
		case []any:
			list = v
		}
		if len(list) == 0 {
			return Cond{}, ruleError("host takes a host name or a list of them")
		}
		for _, v := range list {
			s, ok := v.(string)
			if !ok {
				return Cond{}, ruleError("host takes a host name or a list of them")
			}
			hp, err := compileHost(s)
			if err != nil {
				return Cond{}, err
			}
			c.hosts = append(c.hosts, hp)
		}
		c.Values = list
	case MatchMax:
		n, ok := toNumber(value)
		if !ok || n.r.Sign() < 0 {
			return Cond{}, ruleError("max takes a number not below zero")
		}
		c.max, c.Values = n, []any{value}
	default:
		return Cond{}, ruleError("unknown matcher " + strconv.Quote(string(kind)) + " (equals, one_of, glob, prefix, host, max)")
	}
	return c, nil
}

func toScalar(v any) (scalar, bool) {
	switch x := v.(type) {
	case string:
		return scalar{kind: 's', s: x}, true
	case bool:
		return scalar{kind: 'b', b: x}, true
	}
	if n, ok := toNumber(v); ok {
		return scalar{kind: 'n', num: n}, true
	}
	return scalar{}, false
}

// Args are a call's arguments, decoded once for every rule of the call.
type Args struct {
	v     map[string]any
	home  string
	real  map[string]RealPath
	style pathStyle
	// schema is the tool's input schema (WithSchema): each field is compared as the
	// type it declares.
	schema *Schema
	// linked: some path of real (an argument or a glob's folder) opens another
	// name, so the index by cleaned segments cannot narrow the glob rules
	linked bool
}

// fieldVal is one argument field as the rules of a call see it, looked up once, with
// its cleaned path, parsed host and number kept, so that a thousand rules on one
// field parse it once.
type fieldVal struct {
	resolved bool
	v        any
	ok, bad  bool
	pathDone bool
	pathOK   bool
	path     string
	segs     []string
	lower    []string // segs in lower case, where names are case-insensitive
	hostDone bool
	hostOK   bool
	host     string
	numDone  bool
	numOK    bool
	num      number
	real     realVal // the path as the operating system opens it (paths.go)
	// typesDone: types holds the JSON types the schema declares for the field.
	typesDone bool
	types     []string
}

// DecodeArgs decodes canonical argument bytes (trust.CanonicalArgs) for rules. home
// expands a leading "~" of a path value; real maps each path the rules compare, as
// the operating system walks it (GlobPaths, GlobRoots), to how it opens (session
// fills it for a server on this machine; nil compares the cleaned path only). An
// argument object that does not decode gives Args that match no allow rule.
func DecodeArgs(canonical []byte, home string, real map[string]RealPath) Args {
	return DecodeArgsFor(runtime.GOOS, canonical, home, real)
}

// DecodeArgsFor is DecodeArgs for the paths of operating system goos.
func DecodeArgsFor(goos string, canonical []byte, home string, real map[string]RealPath) Args {
	a := Args{home: home, style: styleFor(goos)}.WithReal(real)
	if len(bytes.TrimSpace(canonical)) == 0 || string(canonical) == "null" {
		a.v = map[string]any{}
		return a
	}
	d := json.NewDecoder(bytes.NewReader(canonical))
	d.UseNumber()
	if err := d.Decode(&a.v); err != nil {
		a.v = nil
	}
	return a
}

// match results of one condition against a value.
type result int8

const (
	noMatch result = iota
	matched
	// unsafe: the value cannot be compared safely (wrong type, a URL that does not
	// parse, a relative path). It never matches an allow rule and always matches a
	// deny or ask rule.
	unsafe
	// unsafePath is unsafe because of where a path opens: through a link it is
	// inside the glob one way and not the other, or it cannot be resolved safely.
	// The same as unsafe, and the reason a sentence names (pathNote).
	unsafePath
)

// Field returns the value at a dotted path; ok is false when a part is absent, bad
// true when a part that must be an object is something else.
func (a Args) field(p []string) (v any, ok, bad bool) {
	if a.v == nil {
		return nil, false, true
	}
	var cur any = a.v
	for _, k := range p {
		m, isMap := cur.(map[string]any)
		if !isMap {
			return nil, false, true
		}
		cur, ok = m[k]
		if !ok {
			return nil, false, false
		}
	}
	return cur, true, false
}

// cleanPath cleans the field's value as a path once, for every glob of the call.
func (fm *fieldVal) cleanPath(s string, a Args) {
	if fm.pathDone {
		return
	}
	fm.pathDone = true
	fm.path, fm.pathOK = a.style.clean(s, a.home)
	if fm.pathOK {
		fm.segs = splitPath(fm.path)
		if a.style.fold {
			fm.lower = lowerAll(fm.segs)
		}
	}
}

func (c *Cond) eval(a Args) result {
	fv := &fieldVal{}
	return c.evalField(fv, a)
}

func (c *Cond) evalField(fm *fieldVal, a Args) result {
	if !fm.resolved {
		fm.resolved = true
		fm.v, fm.ok, fm.bad = a.field(c.path)
	}
	v := fm.v
	if fm.bad {
		return unsafe
	}
	if !fm.ok {
		return noMatch
	}
	if !fm.accepts(a, c.path) {
		// a type the schema does not declare: the server coerces it
		return unsafe
	}
	switch c.Kind {
	case MatchEquals, MatchOneOf:
		s, ok := fm.scalarOf()
		if !ok {
			return unsafe
		}
		res := noMatch
		coerces := fm.coerces(a, c.path)
		for _, want := range c.scalar {
			if want.kind != s.kind {
				if coerces {
					// no declared type, or several: a server may read "5" as 5
					res = unsafe
				}
				continue
			}
			switch s.kind {
			case 's':
				if want.s == s.s {
					return matched
				}
			case 'b':
				if want.b == s.b {
					return matched
				}
			case 'n':
				switch equalNumbers(want.num, s.num) {
				case matched:
					return matched
				case unsafe:
					res = unsafe
				}
			}
		}
		return res
	case MatchPrefix:
		s, ok := v.(string)
		if !ok {
			return unsafe
		}
		if strings.HasPrefix(s, c.Values[0].(string)) {
			return matched
		}
		return noMatch
	case MatchGlob:
		s, ok := v.(string)
		if !ok {
			return unsafe
		}
		return c.matchPath(fm, s, a)
	case MatchHost:
		s, ok := v.(string)
		if !ok {
			return unsafe
		}
		if !fm.hostDone {
			fm.hostDone = true
			fm.host, fm.hostOK = URLHost(s)
		}
		if !fm.hostOK {
			return unsafe
		}
		h := fm.host
		for _, hp := range c.hosts {
			if hp.wildcard && strings.HasSuffix(h, hp.suffix) || !hp.wildcard && h == hp.host {
				return matched
			}
		}
		return noMatch
	case MatchMax:
		switch x := v.(type) {
		case json.Number:
			n, ok := fm.number()
			if !ok || !n.withinSafeRange() {
				return unsafe
			}
			return compareNumbers(n.r.Cmp(c.max.r) <= 0, n.f <= c.max.f)
		case string:
			if !fm.countsCharacters(a, c.path) {
				return unsafe
			}
			le := float64(utf8.RuneCountInString(x)) <= c.max.f
			return compareNumbers(le, le)
		case []any:
			le := float64(len(x)) <= c.max.f
			return compareNumbers(le, le)
		}
		return unsafe
	}
	return unsafe
}

// CleanPath is what a glob compares: the value with a leading "~" expanded by home,
// cleaned lexically (so "~/project/../.ssh/id_rsa" is "HOME/.ssh/id_rsa"). ok is
// false for a relative path, a backslash, NUL or invalid UTF-8: such a value cannot be
// compared safely.
func CleanPath(s, home string) (string, bool) { return hostStyle.clean(s, home) }

// The shapes of a glob's segments, so that matching needs no pattern parsing: most
// segments are literal, "**", "*", "X*" or "*X"; the rest go to path.Match. A pattern
// has no "\\" (compileGlob refuses it or reads it as a separator), so the shapes
// mean what path.Match means by them.
const (
	segLiteral = 'l'
	segAny     = 'a' // "**": any number of segments
	segStar    = '*' // "*": one segment
	segPrefix  = 'p' // "X*"
	segSuffix  = 's' // "*X"
	segPattern = 'g'
)

func shapesOf(pat []string) []byte {
	out := make([]byte, len(pat))
	for i, seg := range pat {
		n := len(seg) - 1
		switch {
		case !strings.ContainsAny(seg, "*?["):
			out[i] = segLiteral
		case seg == "**":
			out[i] = segAny
		case seg == "*":
			out[i] = segStar
		case n > 0 && seg[n] == '*' && !strings.ContainsAny(seg[:n], "*?["):
			out[i] = segPrefix
		case n > 0 && seg[0] == '*' && !strings.ContainsAny(seg[1:], "*?["):
			out[i] = segSuffix
		default:
			out[i] = segPattern
		}
	}
	return out
}

// segMatch matches one segment against one pattern segment of shape sh.
func segMatch(sh byte, pat, seg string) bool {
	switch sh {
	case segLiteral:
		return pat == seg
	case segStar:
		return true
	case segPrefix:
		return strings.HasPrefix(seg, pat[:len(pat)-1])
	case segSuffix:
		return strings.HasSuffix(seg, pat[1:])
	}
	ok, _ := path.Match(pat, seg)
	return ok
}

func globSegs(pat []string, shape []byte, segs []string) bool {
	for len(pat) > 0 {
		if shape[0] == segAny {
			rest, restShape := pat[1:], shape[1:]
			for i := 0; i <= len(segs); i++ {
				if globSegs(rest, restShape, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 || !segMatch(shape[0], pat[0], segs[0]) {
			return false
		}
		pat, shape, segs = pat[1:], shape[1:], segs[1:]
	}
	return len(segs) == 0
}

// MatchRules returns the rule that decides these arguments: among the rules whose
// conditions all match, a deny before an ask before an allow; among rules of the
// same effect the most specific (more exact conditions, then more conditions), then
// the first listed. A condition whose value cannot be compared safely never lets an
// allow rule match and always lets a deny or ask rule match. nil when none matches.
func MatchRules(rules []Rule, a Args) *Rule {
	return NewRuleSet(rules).Match(a)
}

// RuleSet is rules compiled for matching: each distinct field is looked up once per
// call, and rules are indexed by one condition each (below), so that a call is
// compared only with the rules that could match it. Build it once per set of rules
// (NewRuleSet) and match many calls.
//
// The index: a rule with an equals or one_of condition is filed under each of its
// values; else one with a host condition under each host (a "*." pattern under its
// domain, looked up by every parent domain of the call's host); else one with a glob
// whose first segments are literal under those segments; else one with a glob that
// has a literal segment anywhere ("**/.ssh/**") under that segment, looked up by
// every segment of the call's path. The rest are compared with every call. A call whose value for an indexed field cannot be compared safely is
// compared with every deny and ask rule filed under that field (such a value
// matches them), never with its allow rules; an absent field matches none.
type RuleSet struct {
	rules  []Rule
	paths  [][]string // the distinct fields
	fid    [][]int    // per rule, per condition: its field's index in paths
	scan   []int      // rules not in the index, in order
	groups []*ruleGroup
}

// ruleGroup is the index of one field by one kind of condition.
type ruleGroup struct {
	field int
	kind  byte // 'e' equals/one_of, 'h' host, 'g' glob's literal leading segments, 'l' a literal segment anywhere
	lits  int  // 'g': how many leading segments are literal
	fold  bool // 'g', 'l': keys in lower case (names are case-insensitive)
	by    map[string][]int
	// strict are the deny and ask rules of the group, for a value that cannot be
	// compared safely.
	strict []int
	// all are every rule of the group, for a path that opens another name than its
	// cleaned form (through a link) or cannot be resolved: the cleaned segments are
	// then no key to the rules it may match.
	all []int
}

// NewRuleSet compiles rules (kept, not copied) for Match.
func NewRuleSet(rules []Rule) *RuleSet {
	s := &RuleSet{rules: rules, fid: make([][]int, len(rules))}
	ids := map[string]int{}
	type gkey struct {
		field int
		kind  byte
		lits  int
		fold  bool
	}
	groups := map[gkey]*ruleGroup{}
	group := func(k gkey) *ruleGroup {
		g := groups[k]
		if g == nil {
			g = &ruleGroup{field: k.field, kind: k.kind, lits: k.lits, fold: k.fold, by: map[string][]int{}}
			groups[k] = g
			s.groups = append(s.groups, g)
		}
		return g
	}
	for i := range rules {
		s.fid[i] = make([]int, len(rules[i].When))
		for j := range rules[i].When {
			c := &rules[i].When[j]
			id, ok := ids[c.Field]
			if !ok {
				id = len(s.paths)
				ids[c.Field] = id
				s.paths = append(s.paths, c.path)
			}
			s.fid[i][j] = id
		}
		if rules[i].Broken {
			continue // it matches nothing (BrokenRule)
		}
		j, kind, lits := indexCond(&rules[i])
		if j < 0 {
			s.scan = append(s.scan, i)
			continue
		}
		c := &rules[i].When[j]
		gl := lits
		if kind == 'l' {
			gl = 0 // one group per field: the key is the segment itself
		}
		g := group(gkey{s.fid[i][j], kind, gl, (kind == 'g' || kind == 'l') && c.style.fold})
		switch kind {
		case 'e':
			for _, sc := range c.scalar {
				k, fk := scalarKey(sc)
				g.by[k] = append(g.by[k], i)
				if fk != "" {
					g.by[fk] = append(g.by[fk], i)
				}
			}
		case 'h':
			for _, hp := range c.hosts {
				k := "=" + hp.host
				if hp.wildcard {
					k = "*" + hp.host
				}
				g.by[k] = append(g.by[k], i)
			}
		case 'g':
			segs := c.glob
			if g.fold {
				segs = c.globLower
			}
			k := strings.Join(segs[:lits], "/")
			g.by[k] = append(g.by[k], i)
		case 'l':
			k := c.glob[lits]
			if g.fold {
				k = c.globLower[lits]
			}
			g.by[k] = append(g.by[k], i)
		}
		if rules[i].Policy != Allow {
			g.strict = append(g.strict, i)
		}
		g.all = append(g.all, i)
	}
	return s
}

// indexCond picks the condition a rule is filed under: the first equals or one_of,
// else the first host, else the glob with the most literal leading segments; -1 when
// none can be (a glob starting with "**", prefix, max).
func indexCond(r *Rule) (j int, kind byte, lits int) {
	j = -1
	for i := range r.When {
		if k := r.When[i].Kind; k == MatchEquals || k == MatchOneOf {
			return i, 'e', 0
		}
	}
	for i := range r.When {
		if r.When[i].Kind == MatchHost {
			return i, 'h', 0
		}
	}
	for i := range r.When {
		c := &r.When[i]
		if c.Kind != MatchGlob {
			continue
		}
		n := 0
		for n < len(c.lit) && c.lit[n] {
			n++
		}
		if n > lits {
			j, kind, lits = i, 'g', n
		}
	}
	if j >= 0 {
		return j, kind, lits
	}
	// A glob with a literal segment anywhere ("**/.ssh/**"): the path must hold
	// that segment; lits is its index in the pattern.
	for i := range r.When {
		c := &r.When[i]
		if c.Kind != MatchGlob {
			continue
		}
		for n, lit := range c.lit {
			if lit {
				return i, 'l', n
			}
		}
	}
	return -1, 0, 0
}

// scalarKey is the index key of a scalar: two scalars have the same key exactly
// when equals compares them equal. A number has a second key, fk, its float64
// reading: two numbers that share only that key (2^53 and 2^53+1) are a comparison
// that cannot be made safely, which a deny or ask rule must still see. Numbers are
// keyed by their exact value (big.Rat), never through float64 alone.
func scalarKey(s scalar) (k, fk string) {
	switch s.kind {
	case 's':
		return "s" + s.s, ""
	case 'b':
		if s.b {
			return "bt", ""
		}
		return "bf", ""
	}
	// -0 is 0 in both readings (parseNumber)
	return "n" + s.num.r.RatString(), "f" + strconv.FormatFloat(s.num.f, 'g', -1, 64)
}

// candidates adds to out the rules of the group that could match the call: those
// filed under its value, or, when the value cannot be compared safely, the deny and
// ask rules.
func (g *ruleGroup) candidates(out []int, fm *fieldVal, path []string, a Args) []int {
	if !fm.resolved {
		fm.resolved = true
		fm.v, fm.ok, fm.bad = a.field(path)
	}
	if fm.bad {
		return append(out, g.strict...)
	}
	if !fm.ok {
		return out
	}
	if !fm.accepts(a, path) {
		return append(out, g.strict...)
	}
	switch g.kind {
	case 'e':
		sc, ok := fm.scalarOf()
		if !ok {
			return append(out, g.strict...)
		}
		k, fk := scalarKey(sc)
		out = append(out, g.by[k]...)
		if fk != "" {
			out = append(out, g.by[fk]...)
		}
		if fm.coerces(a, path) {
			// an operand of another type cannot be compared safely with it
			out = append(out, g.strict...)
		}
	case 'h':
		str, ok := fm.v.(string)
		if !ok {
			return append(out, g.strict...)
		}
		if !fm.hostDone {
			fm.hostDone = true
			fm.host, fm.hostOK = URLHost(str)
		}
		if !fm.hostOK {
			return append(out, g.strict...)
		}
		h := fm.host
		out = append(out, g.by["="+h]...)
		for i := strings.IndexByte(h, '.'); i >= 0; i = strings.IndexByte(h, '.') {
			h = h[i+1:]
			out = append(out, g.by["*"+h]...)
		}
	case 'g', 'l':
		str, ok := fm.v.(string)
		if !ok {
			return append(out, g.strict...)
		}
		fm.cleanPath(str, a)
		if !fm.pathOK {
			return append(out, g.strict...)
		}
		if a.real != nil {
			if fm.resolveReal(str, a); fm.real.bad || fm.real.differs || a.linked {
				return append(out, g.all...)
			}
		}
		segs := fm.segs
		if g.fold {
			segs = fm.lower
		}
		if g.kind == 'l' {
			for _, seg := range segs {
				out = append(out, g.by[seg]...)
			}
		} else if len(segs) >= g.lits {
			out = append(out, g.by[strings.Join(segs[:g.lits], "/")]...)
		}
	}
	return out
}

// Len is how many rules the set holds.
func (s *RuleSet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.rules)
}

// Match is MatchRules over the set.
func (s *RuleSet) Match(a Args) *Rule { return MatchRuleSets(a, s) }

// MatchRuleSets is MatchRules over several sets as if they were one list, in order.
func MatchRuleSets(a Args, sets ...*RuleSet) *Rule {
	r, _ := MatchRuleSetsNoting(a, sets...)
	return r
}

// MatchRuleSetsNoting is MatchRuleSets that also says, one sentence each, where a
// path argument's resolution (Args.WithReal) changed the outcome: an allow rule set
// aside because a path opens outside its glob or cannot be resolved safely ("rule
// NAME does not apply: path ~/project/cfg/../.bashrc opens ~/.bashrc (~/project/cfg
// is a link to ~/.ssh)"), and the deciding rule when it holds through a link.
func MatchRuleSetsNoting(a Args, sets ...*RuleSet) (*Rule, []string) {
	var best *Rule
	var notes []string
	var bestNote string
	var buf [16]int
	for _, s := range sets {
		if s.Len() == 0 {
			continue
		}
		fvs := make([]fieldVal, len(s.paths))
		cand := append(buf[:0], s.scan...)
		for _, g := range s.groups {
			cand = g.candidates(cand, &fvs[g.field], s.paths[g.field], a)
		}
		// In the order written, so that among equals the first written wins.
		slices.Sort(cand)
		prev := -1
	rules:
		for _, i := range cand {
			if i == prev {
				continue
			}
			prev = i
			r := &s.rules[i]
			if best != nil && !moreSpecific(r, best) {
				continue
			}
			refused, via := false, -1
			for j := range r.When {
				switch res := r.When[j].evalField(&fvs[s.fid[i][j]], a); res {
				case noMatch:
					continue rules
				case unsafe, unsafePath:
					if res == unsafePath && via < 0 {
						via = j
					}
					// an allow rule is refused; its other conditions are still
					// compared, so that only a rule that would have matched is noted
					refused = refused || r.Policy == Allow
				}
			}
			note := ""
			if via >= 0 {
				note = fvs[s.fid[i][via]].pathNote(&r.When[via], a)
			}
			if refused {
				if note != "" && !slices.Contains(notes, "rule "+r.Label()+" does not apply: "+note) {
					notes = append(notes, "rule "+r.Label()+" does not apply: "+note)
				}
				continue
			}
			best, bestNote = r, note
		}
	}
	if bestNote != "" {
		notes = append(notes, bestNote)
	}
	return best, notes
}

// moreSpecific reports whether r would win over best when both match. The effect
// comes first: a matching deny is final and an ask outranks every allow, however
// many conditions the allow has (an allow that names more fields is not more
// careful about the field a deny protects). Specificity only orders rules of the
// same effect, which decides the rule a sentence names.
func moreSpecific(r, best *Rule) bool {
	if s, b := strictness(r.Policy), strictness(best.Policy); s != b {
		return s > b
	}
	if r.exact != best.exact {
		return r.exact > best.exact
	}
	return len(r.When) > len(best.When)
}

func strictness(a Action) int {
	switch a {
	case Deny:
		return 3
	case Ask:
		return 2
	}
	return 1
}

// Sentence names the rule and what it decided, for reasons, dialogs and audit.
func (r *Rule) Sentence() string {
	s := "rule " + r.Label() + " " + verb(r.Policy)
	if r.Reason != "" {
		s += ": " + r.Reason
	}
	return s
}

// WouldHaveAllowed is the sentence of an allow rule that safety overrode.
func (r *Rule) WouldHaveAllowed() string {
	return "rule " + r.Label() + " would have allowed this call, but rules never outrank safety"
}

// Label is the rule's name with where it was written: "NAME (SOURCE)".
func (r *Rule) Label() string {
	if r.Source == "" {
		return r.Name
	}
	return r.Name + " (" + r.Source + ")"
}

func verb(a Action) string {
	switch a {
	case Allow:
		return "allows this call"
	case Deny:
		return "denies this call"
	}
	return "asks for this call"
}

// DecideRules is Decide with the tool's rules applied to this call's arguments; rule is
// the rule that matched (nil when none). In order, first match wins:
//
//  1. c.Action is Deny or the tool is blocked (its server blocked, its definition
//     changed since pinned, disabled): Deny by policy. No rule lifts it; an allow
//     rule that matched is named ("would have allowed").
//  2. A deny rule matched: Deny by rule.
//  3. The context is tainted and EscalatedByTaint(c): Ask by taint, naming an allow
//     rule that would have allowed it.
//  4. An ask rule matched: Ask by rule (it outranks a grant).
//  5. granted: Allow by grant.
//  6. An allow rule matched: Allow by rule.
//  7. Otherwise c.Action by policy.
func DecideRules(c Classification, granted bool, taint Taint, rule *Rule) Verdict {
	if rule == nil {
		return Decide(c, granted, taint)
	}
	switch {
	case c.Action == Deny || c.Tier == TierBlocked:
		v := Decide(c, granted, taint)
		if rule.Policy == Allow {
			v.Reasons = append(v.Reasons, rule.WouldHaveAllowed())
		}
		return v
	case rule.Policy == Deny:
		return Verdict{Action: Deny, By: DecidedByRule, Reasons: prepend(rule.Sentence(), c.Reasons)}
	case taint.Tainted() && EscalatedByTaint(c):
		v := Decide(c, granted, taint)
		if rule.Policy == Allow {
			v.Reasons = append(v.Reasons, rule.WouldHaveAllowed())
		} else {
			v.Reasons = append(v.Reasons, rule.Sentence())
		}
		return v
	case rule.Policy == Ask:
		return Verdict{Action: Ask, By: DecidedByRule, Reasons: prepend(rule.Sentence(), c.Reasons)}
	case granted:
		return Decide(c, granted, taint)
	}
	return Verdict{Action: Allow, By: DecidedByRule, Reasons: prepend(rule.Sentence(), c.Reasons)}
}

// GlobPaths lists the paths that the glob conditions of rules would compare in these
// arguments as the operating system walks them (a leading "~" expanded, ".." kept
// where the system applies it after links), for a caller that resolves them
// (WithReal).
func (a Args) GlobPaths(rules []Rule) []string {
	var out []string
	seen := map[string]bool{}
	for i := range rules {
		for j := range rules[i].When {
			c := &rules[i].When[j]
			if c.Kind != MatchGlob {
				continue
			}
			v, ok, _ := a.field(c.path)
			s, isStr := v.(string)
			if !ok || !isStr {
				continue
			}
			if p, ok := a.style.openPath(s, a.home); ok && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// WithReal returns a with real as the map from each path GlobPaths and GlobRoots
// list to how it opens (see DecodeArgs).
func (a Args) WithReal(real map[string]RealPath) Args {
	a.real, a.linked = real, false
	for k, rp := range real {
		if c, ok := a.style.clean(k, a.home); !ok || rp.Path == "" || c != rp.Path {
			a.linked = true
			break
		}
	}
	return a
}

// CheckRuleFields is RuleProblems for a tool's raw input schema.
func CheckRuleFields(r *Rule, inputSchema []byte) []string {
	return RuleProblems(r, ParseSchema(inputSchema))
}

func schemaTypes(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
