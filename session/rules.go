package session

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// allowRule names the first allow rule of a tool (the config's, then the remembered
// ones: saved, what savedRules returned when the listing was classified), for
// hazards: where a tier asks, such a rule lets some calls run unasked, so the tool's
// legs are unguarded.
func (m *Manager) allowRule(ref trust.Ref, configured []trust.Rule, saved map[trust.Ref][]trust.Rule) string {
	for i := range configured {
		if configured[i].Policy == trust.Allow && (m.engine == nil || !m.engine.ruleOff(configured[i].Name)) {
			return configured[i].Label()
		}
	}
	for _, r := range saved[ref] {
		if r.Policy == trust.Allow && !m.engine.ruleOff(r.Name) {
			return r.Label()
		}
	}
	return ""
}

// savedRules is every tool's remembered rules as rules.toml stands now, read once
// for a whole listing (nil without an engine or a store).
func (m *Manager) savedRules() map[trust.Ref][]trust.Rule {
	if m.engine == nil || m.engine.rules == nil {
		return nil
	}
	return m.engine.rules.byToolNow()
}

// rulesChanged reclassifies a server's part of the snapshot after a remembered rule
// of one of its tools was saved or revoked in this process: the hazards count a leg
// an allow rule lets run unasked as unguarded. Everything that shows the snapshot
// is told, as after a what-if change.
func (m *Manager) rulesChanged(server string) {
	m.publish.Lock()
	m.mu.Lock()
	m.bumpOver(server)
	m.mu.Unlock()
	m.invalidate()
	m.publish.Unlock()
	m.announceOverrides()
}

// ruleFor finds the rule that decides these arguments (nil when none), and the
// sentences that say where a path's resolution changed the outcome. Each field is
// compared as the type schema (the tool's input schema) declares. For a server on
// this machine (local), every path a glob compares is also resolved as the
// operating system will open it (resolveOpen), and a glob allows only when the path
// is inside both as cleaned and as resolved; for a remote server the path is
// compared as cleaned (docs/rules.md).
func ruleFor(sets []*trust.RuleSet, rules [][]trust.Rule, args []byte, home string, local bool, schema *trust.Schema) (*trust.Rule, []string) {
	n := 0
	for _, s := range sets {
		n += s.Len()
	}
	if n == 0 {
		return nil, nil
	}
	a := trust.DecodeArgs(args, home, nil).WithSchema(schema)
	if local {
		var paths []string
		for _, rs := range rules {
			paths = append(paths, a.GlobPaths(rs)...)
		}
		if len(paths) > 0 {
			real := make(map[string]trust.RealPath, len(paths))
			moved := false
			for _, p := range paths {
				if _, done := real[p]; done {
					continue
				}
				rp := resolveOpen(p, home)
				real[p] = rp
				if c, ok := trust.CleanPath(p, home); !ok || rp.Path != c {
					moved = true
				}
			}
			// The rules' own folders may be reached through a link too (HOME,
			// /tmp), and are compared resolved: every rule's when a path opens
			// elsewhere, else the deny and ask rules', which a path named
			// directly may be inside through their folder's link.
			roots := trust.StrictGlobRoots
			if moved {
				roots = trust.GlobRoots
			}
			for _, rs := range rules {
				for _, root := range roots(rs) {
					if _, done := real[root]; !done {
						real[root] = resolveOpen(root, home)
					}
				}
			}
			a = a.WithReal(real)
		}
	}
	return trust.MatchRuleSetsNoting(a, sets...)
}

// withPathNotes adds to a verdict's reasons the sentences that say where a path
// argument opens when that changed which rule applied (an allow rule set aside
// because ~/project/cfg is a link to ~/.ssh). They come first, so the question's
// summary shows them, except where the first reason must stay: the deciding
// rule's sentence (a denial quotes it) and the taint that made the call ask.
func withPathNotes(v trust.Verdict, notes []string) []string {
	if len(notes) == 0 {
		return v.Reasons
	}
	if v.By == trust.DecidedByRule || v.By == trust.DecidedByTaint {
		return append(v.Reasons, notes...)
	}
	return append(slices.Clone(notes), v.Reasons...)
}

// checkRules reads a tool's input schema for its rules and finds the rules that can
// never match it, by name (nil when none).
func checkRules(rules []trust.Rule, inputSchema []byte) (*trust.Schema, map[string][]string) {
	schema := trust.ParseSchema(inputSchema)
	var broken map[string][]string
	for i := range rules {
		if p := trust.RuleProblems(&rules[i], schema); len(p) > 0 {
			if broken == nil {
				broken = map[string][]string{}
			}
			broken[rules[i].Name] = p
		}
	}
	return schema, broken
}

// brokenRule is the ask rule that stands for the first rule in effect (lists: the
// tool's rules after what-if, the config's first) that can never match the tool's
// schema; nil when every rule can match. The config's are checked with the listing
// (tool.BrokenRules), remembered ones here.
func brokenRule(tool ToolInfo, lists [][]trust.Rule, schema *trust.Schema) *trust.Rule {
	for li, rules := range lists {
		for i := range rules {
			r := &rules[i]
			if r.Broken {
				return r // a remembered rule that does not compile
			}
			var problems []string
			if li == 0 && tool.RuleSet != nil {
				problems = tool.BrokenRules[r.Name]
			} else {
				problems = trust.RuleProblems(r, schema)
			}
			if len(problems) > 0 {
				return trust.BrokenRule(r, problems)
			}
		}
	}
	return nil
}

// configRuleSet compiles a tool's config rules once per server config and tool (the
// rules never change while airlock runs; a listing does not recompile them).
func configRuleSet(s *server, tool string, rules []trust.Rule) *trust.RuleSet {
	if len(rules) == 0 {
		return nil
	}
	s.ruleSetsMu.Lock()
	defer s.ruleSetsMu.Unlock()
	if s.ruleSets == nil {
		s.ruleSets = map[string]*trust.RuleSet{}
	}
	rs := s.ruleSets[tool]
	if rs == nil {
		rs = trust.NewRuleSet(rules)
		s.ruleSets[tool] = rs
	}
	return rs
}

// homeDir is the home folder that expands "~" in path arguments; "" when unknown.
func homeDir() string {
	h, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(h) {
		return ""
	}
	return filepath.ToSlash(strings.TrimSuffix(h, string(filepath.Separator)))
}

// local reports whether the server runs on this machine (stdio or in-process), so a
// path in its arguments names a file airlock can resolve.
func (s *server) local() bool {
	return s.cfg.Transport != config.TransportHTTP && s.cfg.Transport != config.TransportSSE
}

// ruleErrors checks the config's rules against a listing: a rule for a tool the
// server does not list, and a condition on a field the tool's input schema does not
// declare or whose type its matcher cannot compare (trust.RuleProblems). The config
// cannot know the schema, so this is found when the tool is listed, and said as a
// server's rule error and log line (and check fails on it). Such a rule can never
// match, so its tool asks for every call (DecideCall).
func ruleErrors(cfg config.Server, tools []listedTool) []RuleError {
	if !hasRules(cfg) {
		return nil // nothing to check: no index of a long listing is needed
	}
	var out []RuleError
	listed := make(map[string]*listedTool, len(tools))
	for i := range tools {
		listed[tools[i].wire.Name] = &tools[i]
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Tools)) {
		rules := cfg.Tools[name].Rules
		if len(rules) == 0 {
			continue
		}
		lt, ok := listed[name]
		if !ok {
			out = append(out, RuleError{Tool: name, Text: "rules for " + name + " apply to no listed tool: the server does not list " + strconv.Quote(name)})
			continue
		}
		schema := trust.ParseSchema(lt.wire.InputSchema)
		for i := range rules {
			for _, p := range trust.RuleProblems(&rules[i], schema) {
				out = append(out, RuleError{Tool: name, Rule: rules[i].Name, Text: p + "; it can never match: every call of " + name + " asks until the rule is fixed"})
			}
		}
	}
	return out
}

// hasRules reports whether any tool of cfg has argument rules.
func hasRules(cfg config.Server) bool {
	for _, t := range cfg.Tools {
		if len(t.Rules) > 0 {
			return true
		}
	}
	return false
}

// WhenOf is a compiled rule's conditions in TOML's shape (field → matcher →
// operand), for display and export.
func WhenOf(r trust.Rule) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, c := range r.When {
		if out[c.Field] == nil {
			out[c.Field] = map[string]any{}
		}
		switch c.Kind {
		case trust.MatchOneOf, trust.MatchHost:
			out[c.Field][string(c.Kind)] = slices.Clone(c.Values)
		default:
			if len(c.Values) > 0 {
				out[c.Field][string(c.Kind)] = c.Values[0]
			}
		}
	}
	return out
}

// AllRules lists every rule: the config's, server by server in config order, then
// the remembered ones as rules.toml stands now. err is the rules file's problem, if
// any (its rules are then as last read).
func (m *Manager) AllRules() ([]RuleEntry, error) {
	var out []RuleEntry
	snap := m.Snapshot()
	problem := func(server, tool string, r *trust.Rule) string {
		ti, ok := snap.Tool(server, tool)
		if !ok {
			return ""
		}
		return strings.Join(trust.RuleProblems(r, trust.ParseSchema(ti.InputSchema)), "; ")
	}
	for _, s := range m.cfg.Servers {
		for _, tool := range slices.Sorted(maps.Keys(s.Tools)) {
			for _, r := range s.Tools[tool].Rules {
				out = append(out, RuleEntry{Name: r.Name, Source: r.Source, Server: s.Name, Tool: tool, When: WhenOf(r),
					Policy: r.Policy, Reason: r.Reason, Matched: m.engine.RuleMatches(r.Name), LastMatch: m.engine.RuleLastMatch(r.Name),
					Problem: problem(s.Name, tool, &r)})
			}
		}
	}
	saved, err := m.engine.Rules()
	compiled := m.savedRules()
	for _, r := range saved {
		p, _ := trust.ParseAction(r.Policy)
		e := RuleEntry{Name: r.ID, Source: RulesFile, Remembered: true, Server: r.Server, Tool: r.Tool, When: r.When,
			Policy: p, Reason: r.Reason, From: r.From, Matched: r.Matched, LastMatch: m.engine.RuleLastMatch(r.ID), Problem: r.Problem}
		if e.Problem == "" {
			for i, c := range compiled[r.Ref()] {
				if c.Name == r.ID {
					e.Problem = problem(r.Server, r.Tool, &compiled[r.Ref()][i])
				}
			}
		}
		out = append(out, e)
	}
	return out, err
}
