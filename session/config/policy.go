package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/airlock-mcp/airlock/trust"
)

// The managed policy (docs/policy.md): a file an administrator owns that the
// person's config can only tighten. It uses the config's schema for what it may
// set, plus allowed_servers, denied_servers and allow_yes_flag. Every value it sets
// is applied as the stricter of the two, and remembers its Source.

// PolicyEnv names the environment variable that names one more policy file.
const PolicyEnv = "AIRLOCK_POLICY"

// Source is where an effective setting came from when the managed policy set it
// (File is the policy file, Line its line, from 1); the zero Source is the
// person's own config.
type Source struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
}

// IsPolicy reports whether the policy set the value.
func (s Source) IsPolicy() bool { return s.File != "" }

// String is "policy: FILE:LINE" ("" for the person's config), as every place that
// shows a setting says it.
func (s Source) String() string {
	if s.File == "" {
		return ""
	}
	if s.Line > 0 {
		return "policy: " + s.File + ":" + strconv.Itoa(s.Line)
	}
	return "policy: " + s.File
}

// Cap is an action the policy holds a tier or a tool to: its calls never run more
// freely than Action, whatever the person's config, rules, grants or answers say.
type Cap struct {
	Action trust.Action
	Source Source
}

// Managed is what the managed policy files set, after they were applied to a
// Config (nil on a Config no policy applied to).
type Managed struct {
	// Files are the policy files applied, in order.
	Files []string
	// Tiers are the policy's caps on the read, write and destructive tiers (Action
	// unset where no policy file sets one), applied after every tool's own policy.
	Tiers [3]Cap
	// AllowYes is false when a policy file says allow_yes_flag = false (YesSource
	// names it): `airlock call --yes` is refused.
	AllowYes  bool
	YesSource Source
	// Set is every value the policy files set, in file and line order.
	Set []Setting
}

// Setting is one value a policy file set: its key path (servers.web.trust), the
// value as written, and where.
type Setting struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source Source `json:"source"`
}

// TierCap is the policy's cap on tier t (Action unset when none, or when m is nil).
func (m *Managed) TierCap(t trust.Tier) Cap {
	if m == nil || t < trust.TierRead || t > trust.TierDestructive {
		return Cap{}
	}
	return m.Tiers[t]
}

// Stricter is the stricter of two actions: deny over ask over allow; an unset
// action has no say.
func Stricter(a, b trust.Action) trust.Action {
	if a == trust.ActionUnset || b > a && b <= trust.Deny {
		return b
	}
	return a
}

// trustRank orders trust from strictest: blocked < untrusted < trusted.
func trustRank(t trust.ServerTrust) int {
	switch t {
	case trust.BlockedServer:
		return 0
	case trust.Trusted:
		return 2
	}
	return 1
}

// StricterTrust is the stricter of two trusts: blocked < untrusted < trusted.
func StricterTrust(a, b trust.ServerTrust) trust.ServerTrust {
	if trustRank(b) < trustRank(a) {
		return b
	}
	return a
}

// Policy is one parsed policy file.
type Policy struct {
	// File is the policy file's path.
	File string

	tiers     [3]Cap
	limits    Limits
	limitSrc  map[string]Source // by limits key
	servers   map[string]*policyServer
	allowed   []serverPattern
	allowSet  bool
	allowSrc  Source
	denied    []serverPattern
	allowYes  *bool
	yesSource Source
	set       []Setting
}

type policyServer struct {
	trust      trust.ServerTrust
	trustSet   bool
	trustSrc   Source
	resources  Cap
	prompts    Cap
	labels     []trust.Leg
	labelsSrc  Source
	rate       *Rate
	rateSrc    Source
	tools      map[string]*policyTool
	sandbox    *Sandbox
	sandboxSrc Source
}

type policyTool struct {
	policy  Cap
	rules   []trust.Rule
	rate    *Rate
	rateSrc Source
}

type serverPattern struct {
	glob   string
	source Source
}

// The raw policy file: the config's tables, only the keys a policy may set.
type rawPolicyFile struct {
	Policy         *rawPolicyTiers             `toml:"policy"`
	Limits         *rawLimits                  `toml:"limits"`
	Servers        map[string]*rawPolicyServer `toml:"servers"`
	AllowedServers value                       `toml:"allowed_servers"`
	DeniedServers  value                       `toml:"denied_servers"`
	AllowYesFlag   value                       `toml:"allow_yes_flag"`
}

type rawPolicyTiers struct {
	Read        value `toml:"read"`
	Write       value `toml:"write"`
	Destructive value `toml:"destructive"`
}

type rawPolicyServer struct {
	Trust      value                     `toml:"trust"`
	Resources  value                     `toml:"resources"`
	Prompts    value                     `toml:"prompts"`
	Labels     value                     `toml:"labels"`
	Rate       value                     `toml:"rate"`
	RateAction value                     `toml:"rate_action"`
	Tools      map[string]*rawPolicyTool `toml:"tools"`
	Sandbox    *rawSandbox               `toml:"sandbox"`
}

type rawPolicyTool struct {
	Policy     value `toml:"policy"`
	Rules      value `toml:"rules"`
	Rate       value `toml:"rate"`
	RateAction value `toml:"rate_action"`
}

// ParsePolicy parses and validates a policy file's contents (path names it in
// errors and sources). Like Parse it is strict: an unknown key, a value of the
// wrong type and an allow rule (a policy only tightens) are each an *Error naming
// key and line, joined in line order.
func ParsePolicy(data []byte, path string) (*Policy, error) {
	var raw rawPolicyFile
	lines, probs, err := decodeTwice(data, path, &raw)
	if err != nil {
		return nil, err
	}
	for _, e := range probs {
		if len(e.k) >= 3 && e.k[0] == "servers" && e.unknown {
			if _, _, ok := field(reflect.TypeFor[rawServer](), e.k[2]); ok && len(e.k) == 3 {
				e.Msg = "a policy's server table does not define a server, it only tightens the person's server of that name; it may set trust, resources, prompts, labels, rate, rate_action, tools and sandbox"
			}
		}
	}
	pb := policyBuilder{builder: builder{env: os.LookupEnv, home: homeDir(os.LookupEnv)}, file: path, lines: lines}
	p := pb.build(&raw)
	probs = append(probs, pb.probs...)
	if len(probs) > 0 {
		probs.locate(path, lines)
		return nil, probs.err()
	}
	nameRulesIn(p.rulesForNaming(), path, lines)
	slices.SortStableFunc(p.set, func(a, b Setting) int { return a.Source.Line - b.Source.Line })
	return p, nil
}

type policyBuilder struct {
	builder
	file  string
	lines map[string]int
}

// at is the source of the key path k.
func (b *policyBuilder) at(k ...string) Source {
	return Source{File: b.file, Line: b.lines[toml.Key(k).String()]}
}

func (b *policyBuilder) note(p *Policy, value string, k ...string) Source {
	src := b.at(k...)
	p.set = append(p.set, Setting{Key: toml.Key(k).String(), Value: value, Source: src})
	return src
}

func (b *policyBuilder) build(raw *rawPolicyFile) *Policy {
	p := &Policy{File: b.file, servers: map[string]*policyServer{}, limitSrc: map[string]Source{}}
	if t := raw.Policy; t != nil {
		for i, v := range []value{t.Read, t.Write, t.Destructive} {
			key := trust.Tier(i).String()
			var a trust.Action
			b.action(toml.Key{"policy", key}, v, &a)
			if a != trust.ActionUnset {
				p.tiers[i] = Cap{a, b.note(p, a.String(), "policy", key)}
			}
		}
	}
	if l := raw.Limits; l != nil {
		var c Config
		before := len(b.probs)
		b.readLimits(l, &c.Limits)
		if len(b.probs) == before {
			p.limits = c.Limits
			for key, v := range map[string]value{"max_args_bytes": l.MaxArgsBytes, "max_waiting_per_context": l.MaxWaitingPerContext,
				"max_waiting_bytes": l.MaxWaitingBytes, "taint_prune_after_days": l.TaintPruneAfterDays,
				"calls_per_minute": l.CallsPerMinute, "rate_action": l.RateAction} {
				if v.set {
					p.limitSrc[key] = b.note(p, fmt.Sprint(v.v), "limits", key)
				}
			}
		}
	}
	for name, rs := range raw.Servers {
		if rs == nil {
			rs = &rawPolicyServer{}
		}
		p.servers[name] = b.server(p, name, rs)
	}
	patterns := func(key string, v value) []serverPattern {
		var out []serverPattern
		b.strList(toml.Key{key}, v, func(i int, g string) string {
			if msg := globProblem(g); msg != "" {
				b.probs.addAt(toml.Key{key}, i, "%s", msg)
			} else {
				out = append(out, serverPattern{g, b.at(key)})
			}
			return g
		})
		if v.set {
			globs := make([]string, len(out))
			for i, sp := range out {
				globs[i] = sp.glob
			}
			b.note(p, fmt.Sprintf("%q", globs), key)
		}
		return out
	}
	p.allowed = patterns("allowed_servers", raw.AllowedServers)
	p.allowSet, p.allowSrc = raw.AllowedServers.set, b.at("allowed_servers")
	p.denied = patterns("denied_servers", raw.DeniedServers)
	if v := b.boolean(toml.Key{"allow_yes_flag"}, raw.AllowYesFlag); v != nil {
		p.allowYes = v
		p.yesSource = b.note(p, strconv.FormatBool(*v), "allow_yes_flag")
	}
	return p
}

// readLimits reads a [limits] table into l (the config's and a policy's).
func (b *builder) readLimits(l *rawLimits, out *Limits) {
	var n int64
	if b.positive(toml.Key{"limits", "max_args_bytes"}, l.MaxArgsBytes, &n) {
		if n > trust.MaxArgsLimit {
			b.probs.add(toml.Key{"limits", "max_args_bytes"}, "want at most %d (32 MiB: the longest arguments an audit record holds whole), got %d", trust.MaxArgsLimit, n)
		} else {
			out.MaxArgsBytes = int(n)
		}
	}
	if b.positive(toml.Key{"limits", "max_waiting_per_context"}, l.MaxWaitingPerContext, &n) {
		out.MaxWaitingPerContext = int(n)
	}
	if b.positive(toml.Key{"limits", "max_waiting_bytes"}, l.MaxWaitingBytes, &n) {
		out.MaxWaitingBytes = n
	}
	if b.positive(toml.Key{"limits", "taint_prune_after_days"}, l.TaintPruneAfterDays, &n) {
		if n > maxTaintPruneDays {
			b.probs.add(toml.Key{"limits", "taint_prune_after_days"}, "want at most %d days (100 years), got %d", maxTaintPruneDays, n)
		} else {
			out.TaintPruneAfter = time.Duration(n) * 24 * time.Hour
		}
	}
	b.callsPerMinute(l, out)
}

func (b *policyBuilder) server(p *Policy, name string, r *rawPolicyServer) *policyServer {
	k := toml.Key{"servers", name}
	at := func(key ...string) toml.Key { return append(slices.Clip(k), key...) }
	src := func(key ...string) []string { return at(key...) }
	if !validName(name) {
		b.probs.add(k, "server name must match %s", namePattern)
	}
	ps := &policyServer{tools: map[string]*policyTool{}}
	if t, ok := b.str(at("trust"), r.Trust); ok {
		if st, ok := trust.ParseServerTrust(t); ok {
			ps.trust, ps.trustSet = st, true
			ps.trustSrc = b.note(p, t, src("trust")...)
		} else {
			b.probs.add(at("trust"), "want trusted|untrusted|blocked, got %q", t)
		}
	}
	for _, c := range []struct {
		key string
		v   value
		dst *Cap
	}{{"resources", r.Resources, &ps.resources}, {"prompts", r.Prompts, &ps.prompts}} {
		var a trust.Action
		b.action(at(c.key), c.v, &a)
		if a != trust.ActionUnset {
			*c.dst = Cap{a, b.note(p, a.String(), src(c.key)...)}
		}
	}
	if r.Labels.set {
		ps.labels = b.legs(at("labels"), r.Labels)
		ps.labelsSrc = b.note(p, fmt.Sprint(ps.labels), src("labels")...)
	}
	if ps.rate = b.rate(k, r.Rate, r.RateAction); ps.rate != nil {
		ps.rateSrc = b.note(p, ps.rate.String()+" "+ps.rate.Action.String(), src("rate")...)
	}
	for tool, rt := range r.Tools {
		if rt == nil {
			rt = &rawPolicyTool{}
		}
		tk := at("tools", tool)
		tat := func(key string) toml.Key { return append(slices.Clip(tk), key) }
		pt := &policyTool{}
		if tool == "" {
			b.probs.add(tk, "tool name is empty")
		}
		var a trust.Action
		b.action(tat("policy"), rt.Policy, &a)
		if a != trust.ActionUnset {
			pt.policy = Cap{a, b.note(p, a.String(), tat("policy")...)}
		}
		rules := b.rules(tat("rules"), rt.Rules, b.home)
		for _, rule := range rules {
			if rule.Policy == trust.Allow {
				e := &Error{Key: rule.Name + ".policy", k: tat("rules"), lineKey: rule.Name,
					Msg: "a policy rule may only deny or ask: the policy tightens, it never allows what the person's config would ask about"}
				b.probs = append(b.probs, e)
				continue
			}
			b.note(p, rule.Policy.String(), rule.Name)
			pt.rules = append(pt.rules, rule)
		}
		if pt.rate = b.rate(tk, rt.Rate, rt.RateAction); pt.rate != nil {
			pt.rateSrc = b.note(p, pt.rate.String()+" "+pt.rate.Action.String(), tat("rate")...)
		}
		ps.tools[tool] = pt
	}
	if r.Sandbox != nil {
		ps.sandbox = b.sandbox(at("sandbox"), r.Sandbox)
		ps.sandbox.Required = true // a policy's fence is never optional
		ps.sandboxSrc = b.note(p, "required", src("sandbox")...)
	}
	return ps
}

// rulesForNaming lists every rule of the policy, for naming their sources.
func (p *Policy) rulesForNaming() [][]trust.Rule {
	var out [][]trust.Rule
	for _, s := range p.servers {
		for _, t := range s.tools {
			out = append(out, t.rules)
		}
	}
	return out
}

// nameRulesIn sets each rule's Source to "policy FILE:LINE".
func nameRulesIn(lists [][]trust.Rule, file string, lines map[string]int) {
	for _, rules := range lists {
		for j := range rules {
			rules[j].Source = "policy " + file
			if l, ok := lines[rules[j].Name]; ok {
				rules[j].Source += ":" + strconv.Itoa(l)
			}
		}
	}
}

// globProblem says why g is not a server pattern, or "".
func globProblem(g string) string {
	if g == "" {
		return "an empty pattern matches nothing; remove it"
	}
	if !utf8.ValidString(g) {
		return "the pattern is not valid UTF-8"
	}
	return ""
}

// matchGlob matches s against g whole: "*" (and "**") matches any run of bytes,
// spaces and slashes included; "?" one character (one byte of invalid UTF-8); "\"
// makes the next character literal; every other byte is itself.
func matchGlob(g, s string) bool {
	// Iterative with one backtrack point, linear in len(g)*len(s) at worst.
	gi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		if gi < len(g) {
			switch c := g[gi]; {
			case c == '*':
				for gi < len(g) && g[gi] == '*' {
					gi++
				}
				star, mark = gi, si
				continue
			case c == '?':
				_, n := utf8.DecodeRuneInString(s[si:])
				gi, si = gi+1, si+n
				continue
			case c == '\\' && gi+1 < len(g) && g[gi+1] == s[si]:
				gi, si = gi+2, si+1
				continue
			case c != '\\' && c == s[si]:
				gi, si = gi+1, si+1
				continue
			}
		}
		if star < 0 {
			return false
		}
		mark++
		gi, si = star, mark
	}
	for gi < len(g) && g[gi] == '*' {
		gi++
	}
	return gi == len(g)
}

// CommandLine is a stdio server's command and arguments as airlock launches them,
// as allowed_servers and denied_servers patterns see it: the parts joined by single
// spaces, a part holding a space, a quote, a backslash or a character that is not
// printable written as a Go quoted string, so that no argument can pass for two.
func (s *Server) CommandLine() string {
	if s.Command == "" {
		return ""
	}
	parts := append([]string{s.Command}, s.Args...)
	for i, a := range parts {
		if a == "" || strings.ContainsAny(a, " \"\\\t") || strings.ContainsFunc(a, func(r rune) bool { return r < ' ' || r == 0x7f || r == utf8.RuneError }) || !utf8.ValidString(a) {
			parts[i] = strconv.Quote(a)
		}
	}
	return strings.Join(parts, " ")
}

// serverForms are what patterns are matched against: the command line and the URL.
func serverForms(s *Server) []string {
	var out []string
	if cl := s.CommandLine(); cl != "" {
		out = append(out, cl)
	}
	if s.URL != "" {
		out = append(out, s.URL)
	}
	return out
}

// Apply tightens c by the policy: every value it sets becomes the stricter of the
// two, and remembers where it came from. Servers the policy does not allow are
// blocked. A policy server table names a server of c; one c lacks changes nothing.
func (p *Policy) Apply(c *Config) error {
	if c.Managed == nil {
		c.Managed = &Managed{AllowYes: true}
	}
	m := c.Managed
	m.Files = append(m.Files, p.File)
	m.Set = append(m.Set, p.set...)
	if p.allowYes != nil && !*p.allowYes && m.AllowYes {
		m.AllowYes, m.YesSource = false, p.yesSource
	}
	tiers := []*trust.Action{&c.Policy.Read, &c.Policy.Write, &c.Policy.Destructive}
	for i, cp := range p.tiers {
		if cp.Action == trust.ActionUnset {
			continue
		}
		*tiers[i] = Stricter(*tiers[i], cp.Action)
		if Stricter(m.Tiers[i].Action, cp.Action) != m.Tiers[i].Action || m.Tiers[i].Action == trust.ActionUnset {
			m.Tiers[i] = cp
		}
	}
	p.applyLimits(c)
	for i := range c.Servers {
		s := &c.Servers[i]
		p.applyPatterns(s)
		ps := p.servers[s.Name]
		if ps == nil {
			continue
		}
		if ps.trustSet {
			if !s.TrustCapSource.IsPolicy() || StricterTrust(s.TrustCap, ps.trust) != s.TrustCap {
				s.TrustCap, s.TrustCapSource = ps.trust, ps.trustSrc
			}
			if StricterTrust(s.Trust, ps.trust) != s.Trust {
				s.Trust, s.TrustSource = ps.trust, ps.trustSrc
				if ps.trust == trust.BlockedServer && s.Blocked == "" {
					s.Blocked = "the team policy blocks it (" + ps.trustSrc.String() + ")"
				}
			}
		}
		applyChannel(&s.Resources, &s.ResourcesSource, ps.resources, c.Policy.Read)
		applyChannel(&s.Prompts, &s.PromptsSource, ps.prompts, c.Policy.Read)
		for _, l := range ps.labels {
			if !slices.Contains(s.Labels, l) {
				s.Labels = append(s.Labels, l)
				s.LabelsSource = ps.labelsSrc
			}
		}
		if ps.rate != nil {
			s.PolicyRates = append(s.PolicyRates, SourcedRate{*ps.rate, ps.rateSrc})
		}
		for name, pt := range ps.tools {
			if s.Tools == nil {
				s.Tools = map[string]Tool{}
			}
			t := s.Tools[name]
			if pt.policy.Action != trust.ActionUnset && (t.Cap.Action == trust.ActionUnset || Stricter(t.Cap.Action, pt.policy.Action) != t.Cap.Action) {
				t.Cap = pt.policy
			}
			t.PolicyRules = append(slices.Clip(t.PolicyRules), pt.rules...)
			if pt.rate != nil {
				t.PolicyRates = append(slices.Clip(t.PolicyRates), SourcedRate{*pt.rate, pt.rateSrc})
			}
			s.Tools[name] = t
		}
		if ps.sandbox != nil {
			if s.Transport != TransportStdio {
				block(s, ps.sandboxSrc)
				s.Blocked = "the team policy requires a sandbox, and only a stdio server can be fenced (" + ps.sandboxSrc.String() + ")"
			} else {
				s.Sandbox = tightenSandbox(s.Sandbox, ps.sandbox)
				s.SandboxSource = ps.sandboxSrc
			}
		}
	}
	return nil
}

// applyChannel sets a server's resources or prompts action to the policy's when it
// is stricter than what the person's config gives (its own, else the read tier's).
func applyChannel(dst *trust.Action, src *Source, cp Cap, read trust.Action) {
	if cp.Action == trust.ActionUnset {
		return
	}
	now := *dst
	if now == trust.ActionUnset {
		now = read
	}
	if Stricter(now, cp.Action) != now {
		*dst, *src = cp.Action, cp.Source
	}
}

// tightenSandbox is the policy's sandbox on a server: the policy's paths (the
// person's are not added), no network unless both allow it, the smaller of each
// limit, always required.
func tightenSandbox(user, pol *Sandbox) *Sandbox {
	out := *pol
	out.Required = true
	if user == nil {
		return &out
	}
	if user.Network == NetworkNone {
		out.Network = NetworkNone
	}
	smaller := func(a, b int64) int64 {
		if a == 0 || b != 0 && b < a {
			return b
		}
		return a
	}
	out.MemoryBytes = smaller(out.MemoryBytes, user.MemoryBytes)
	out.CPUSeconds = smaller(out.CPUSeconds, user.CPUSeconds)
	out.Processes = smaller(out.Processes, user.Processes)
	return &out
}

// applyPatterns blocks a server that allowed_servers (when set) does not match or
// that denied_servers matches.
func (p *Policy) applyPatterns(s *Server) {
	forms := serverForms(s)
	for _, d := range p.denied {
		for _, f := range forms {
			if matchGlob(d.glob, f) {
				block(s, d.source)
				s.Blocked = fmt.Sprintf("the team policy denies it: it matches denied_servers pattern %q (%s)", d.glob, d.source)
				return
			}
		}
	}
	if !p.allowSet {
		return
	}
	for _, a := range p.allowed {
		for _, f := range forms {
			if matchGlob(a.glob, f) {
				return
			}
		}
	}
	block(s, p.allowSrc)
	s.Blocked = "the team policy does not allow it: its command line and URL match none of allowed_servers (" + p.allowSrc.String() + ")"
}

// block makes the policy block s: its trust and the loosest a what-if may give it.
func block(s *Server, src Source) {
	s.Trust, s.TrustSource = trust.BlockedServer, src
	s.TrustCap, s.TrustCapSource = trust.BlockedServer, src
}

// applyLimits sets each limit to the smaller of the two (an unset limit is no
// limit, not the smallest) and the rate action to the stricter.
func (p *Policy) applyLimits(c *Config) {
	l, pl := &c.Limits, p.limits
	if c.LimitSources == nil {
		c.LimitSources = map[string]Source{}
	}
	set := func(key string) { c.LimitSources[key] = p.limitSrc[key] }
	if pl.MaxArgsBytes > 0 && (l.MaxArgsBytes <= 0 || pl.MaxArgsBytes < l.MaxArgsBytes) {
		l.MaxArgsBytes = pl.MaxArgsBytes
		set("max_args_bytes")
	}
	if pl.MaxWaitingPerContext > 0 && (l.MaxWaitingPerContext <= 0 || pl.MaxWaitingPerContext < l.MaxWaitingPerContext) {
		l.MaxWaitingPerContext = pl.MaxWaitingPerContext
		set("max_waiting_per_context")
	}
	if pl.MaxWaitingBytes > 0 && (l.MaxWaitingBytes <= 0 || pl.MaxWaitingBytes < l.MaxWaitingBytes) {
		l.MaxWaitingBytes = pl.MaxWaitingBytes
		set("max_waiting_bytes")
	}
	if pl.TaintPruneAfter > 0 && (l.TaintPruneAfter <= 0 || pl.TaintPruneAfter < l.TaintPruneAfter) {
		l.TaintPruneAfter = pl.TaintPruneAfter
		set("taint_prune_after_days")
	}
	if pl.CallsPerMinute > 0 {
		if l.CallsPerMinute <= 0 || pl.CallsPerMinute < l.CallsPerMinute {
			l.CallsPerMinute = pl.CallsPerMinute
			set("calls_per_minute")
		}
		if l.RateAction == trust.ActionUnset || Stricter(l.RateAction, pl.RateAction) != l.RateAction {
			l.RateAction = pl.RateAction
			set("rate_action")
		}
	}
}

// PolicyError is a policy file that cannot be used: airlock does not start.
type PolicyError struct {
	Path string
	Why  string // "is writable by others (mode 0666)"
	Err  error  // a parse error or the os error, when that is why
}

func (e *PolicyError) Error() string {
	if e.Err != nil && e.Why == "" {
		return "policy " + e.Path + ": " + e.Err.Error() + "; airlock will not start"
	}
	return "policy " + e.Path + " " + e.Why + "; airlock will not start"
}

func (e *PolicyError) Unwrap() error { return e.Err }

// policyPlace is one place a policy file may be: named says AIRLOCK_POLICY named
// it, so it must exist.
type policyPlace struct {
	path  string
	named bool
}

// policyPlacesFor are the policy files on goos with the environment env: the
// platform's, then the one AIRLOCK_POLICY names (which must be absolute).
// programData is Windows' ProgramData folder as the system knows it (its known
// folder, never the environment's %ProgramData%, which the person sets: a policy
// found through it could be any file they chose).
//
//	linux, BSD  /etc/airlock/policy.toml
//	darwin      /Library/Application Support/airlock/policy.toml
//	windows     PROGRAMDATA\airlock\policy.toml (C:\ProgramData when unknown)
func policyPlacesFor(goos, programData string, env func(string) (string, bool)) ([]policyPlace, error) {
	var out []policyPlace
	switch goos {
	case "windows":
		d := programData
		if !IsAbsFor(goos, d) {
			d = `C:\ProgramData`
		}
		out = append(out, policyPlace{path: joinFor(goos, d, "airlock", "policy.toml")})
	case "darwin", "ios":
		out = append(out, policyPlace{path: "/Library/Application Support/airlock/policy.toml"})
	default:
		out = append(out, policyPlace{path: "/etc/airlock/policy.toml"})
	}
	if p, ok := env(PolicyEnv); ok && p != "" {
		if !IsAbsFor(goos, p) {
			return nil, &PolicyError{Path: p, Why: "is not an absolute path (" + PolicyEnv + ")"}
		}
		if p != out[0].path {
			out = append(out, policyPlace{path: p, named: true})
		}
	}
	return out, nil
}

// PolicyPaths are the policy files airlock looks for on this system (the
// platform's and AIRLOCK_POLICY's), whether or not they exist.
func PolicyPaths() ([]string, error) {
	places, err := policyPlacesFor(runtime.GOOS, systemProgramData(), os.LookupEnv)
	var out []string
	for _, p := range places {
		out = append(out, p.path)
	}
	return out, err
}

// LoadPolicies finds, checks and parses the policy files: none when the platform's
// file does not exist and AIRLOCK_POLICY is unset. Fail closed: a file that exists
// but cannot be read or trusted, or that AIRLOCK_POLICY names and does not exist, is
// a *PolicyError, never an empty policy.
func LoadPolicies() ([]*Policy, error) {
	places, err := policyPlacesFor(runtime.GOOS, systemProgramData(), os.LookupEnv)
	if err != nil {
		return nil, err
	}
	var out []*Policy
	for _, pl := range places {
		data, err := readPolicyFile(pl.path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !pl.named:
			continue
		case errors.Is(err, fs.ErrNotExist):
			return nil, &PolicyError{Path: pl.path, Why: "does not exist (" + PolicyEnv + " names it)", Err: err}
		case err != nil:
			var pe *PolicyError
			if errors.As(err, &pe) {
				return nil, err
			}
			return nil, &PolicyError{Path: pl.path, Why: "cannot be read: " + err.Error(), Err: err}
		}
		p, err := ParsePolicy(data, pl.path)
		if err != nil {
			return nil, &PolicyError{Path: pl.path, Err: err}
		}
		out = append(out, p)
	}
	return out, nil
}

// ApplyPolicies applies every policy LoadPolicies finds to c.
func ApplyPolicies(c *Config) error {
	ps, err := LoadPolicies()
	if err != nil {
		return err
	}
	for _, p := range ps {
		if err := p.Apply(c); err != nil {
			return err
		}
	}
	return nil
}

// LoadWithPolicy is Load, then the managed policy applied (ApplyPolicies).
func LoadWithPolicy(path string) (*Config, error) {
	c, err := Load(path)
	if err != nil {
		return nil, err
	}
	if err := ApplyPolicies(c); err != nil {
		return nil, err
	}
	return c, nil
}

// maxPolicyBytes bounds the policy file airlock reads.
const maxPolicyBytes = 4 << 20

// policyStat is what the owner check reads of the policy file or its folder.
type policyStat struct {
	uid  uint32
	perm fs.FileMode
}

// policyStatProblem says why a policy file (or its folder, dir) with these facts
// cannot be trusted by a process running as uid me, or "": it must be owned by
// root, not writable by group or others, and not writable by me unless me is root.
func policyStatProblem(st policyStat, me int) string {
	switch {
	case st.uid != 0:
		return fmt.Sprintf("is owned by uid %d, not root", st.uid)
	case st.perm&0o002 != 0:
		return fmt.Sprintf("is writable by others (mode %04o)", st.perm)
	case st.perm&0o020 != 0:
		return fmt.Sprintf("is writable by its group (mode %04o)", st.perm)
	case me != 0 && int(st.uid) == me && st.perm&0o200 != 0:
		return fmt.Sprintf("is writable by you (uid %d)", me)
	}
	return ""
}

// dirProblem is a folder's problem said of the policy file in it.
func dirProblem(dir, why string) string {
	return "is in the folder " + dir + ", which " + why + ": whoever may write the folder may replace the file"
}
