package session

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/secrets"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// allowRule names the first allow rule of a tool (the config's, then the remembered
// ones: saved, what savedRules returned when the listing was classified), for
// hazards: where a tier asks, such a rule lets some calls run unasked, so the tool's
// legs are unguarded.
func (m *Manager) allowRule(ref trust.Ref, configured []trust.Rule, saved map[trust.Ref][]trust.Rule) string {
	for i := range configured {
		if configured[i].Policy == trust.Allow && (m.engine == nil || !m.engine.RuleOff(configured[i].Name)) {
			return configured[i].Label()
		}
	}
	for _, r := range saved[ref] {
		if r.Policy == trust.Allow && !m.engine.RuleOff(r.Name) {
			return r.Label()
		}
	}
	return ""
}

// savedRules is every tool's remembered rules as rules.toml stands now, read once
// for a whole listing (nil without an engine or a store).
func (m *Manager) savedRules() map[trust.Ref][]trust.Rule {
	return m.engine.CompiledRules()
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
func ruleErrors(cfg config.Server, tools []listedTool) []model.RuleError {
	if !hasRules(cfg) {
		return nil // nothing to check: no index of a long listing is needed
	}
	var out []model.RuleError
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
			out = append(out, model.RuleError{Tool: name, Text: "rules for " + name + " apply to no listed tool: the server does not list " + strconv.Quote(name)})
			continue
		}
		schema := trust.ParseSchema(lt.wire.InputSchema)
		for i := range rules {
			for _, p := range trust.RuleProblems(&rules[i], schema) {
				out = append(out, model.RuleError{Tool: name, Rule: rules[i].Name, Text: p + "; it can never match: every call of " + name + " asks until the rule is fixed"})
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

// AllRules lists every rule: the config's, server by server in config order, then
// the remembered ones as rules.toml stands now. err is the rules file's problem, if
// any (its rules are then as last read).
func (m *Manager) AllRules() ([]model.RuleEntry, error) {
	var out []model.RuleEntry
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
				out = append(out, model.RuleEntry{Name: r.Name, Source: r.Source, Server: s.Name, Tool: tool, When: approval.WhenOf(r),
					Policy: r.Policy, Reason: r.Reason, Matched: m.engine.RuleMatches(r.Name), LastMatch: m.engine.RuleLastMatch(r.Name),
					Problem: problem(s.Name, tool, &r)})
			}
		}
	}
	saved, err := m.engine.Rules()
	compiled := m.savedRules()
	for _, r := range saved {
		p, _ := trust.ParseAction(r.Policy)
		e := model.RuleEntry{Name: r.ID, Source: approval.RulesFile, Remembered: true, Server: r.Server, Tool: r.Tool, When: r.When,
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

// StateFileProblems are the state files airlock trusts that it cannot read now, each
// as a sentence that names the file, why, and what airlock does meanwhile (while
// taint.json cannot be read every context is treated as tainted; while rules.toml
// cannot be read every tool a remembered rule could decide asks; while rates.json
// cannot be read or written every call under a rate limit asks). It is empty when
// every file can be read. The TUI shows them as a red status, `check` as notices
// and `airlock call` as errors.
func (m *Manager) StateFileProblems() []string {
	var out []string
	if err := m.engine.TaintStoreProblem(); err != nil {
		out = append(out, err.Error())
	}
	if err := m.engine.RulesProblem(); err != nil {
		out = append(out, err.Error())
	}
	if err := m.engine.RatesProblem(); err != nil {
		out = append(out, err.Error())
	}
	return out
}

// knownPlainMin is the shortest value of a variable with an ordinary name that
// knownSecrets looks for.
const knownPlainMin = 16

// knownSecrets are the values of the environment variables airlock passes to its
// servers, of every server (a token for one server sent to another's tool is the
// leak): each server's env table, and the inherit_env variables set in airlock's own
// environment now (lookup), skipped where the server's start skips them (a shell
// function). Each is named by its variable and server, never its value.
//
// Not every value is looked for: one counts when its variable's name is a secret's
// (secrets.Import.Key: API_KEY, DB_PASSWORD, GITHUB_TOKEN), when the value looks
// like a credential by itself (secrets.Import.Value: a published token prefix, a
// long opaque token, a URL with a password), or when it is at least
// knownPlainMin bytes long. A short value under an ordinary name (NODE_ENV =
// "production", LOG_FORMAT = "json-lines") is ordinary text too often, and a
// question about it every time it appears in a message would teach people to answer
// without reading. Find never looks for a value shorter than secrets.MinKnown.
func knownSecrets(servers []config.Server, lookup func(string) (string, bool)) []secrets.Known {
	var out []secrets.Known
	add := func(server, name, value string) {
		if value == "" || (len(value) < knownPlainMin && !secrets.Import.Key(name) && !secrets.Import.Value(value)) {
			return
		}
		out = append(out, secrets.Known{Name: "the value of " + name + " that airlock passes to server " + server, Value: value})
	}
	for _, s := range servers {
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			add(s.Name, k, s.Env[k])
		}
		for _, k := range s.InheritEnv {
			if _, set := s.Env[k]; set {
				continue // the env table wins
			}
			if v, ok := lookup(k); ok && !strings.HasPrefix(v, "()") {
				add(s.Name, k, v)
			}
		}
	}
	return out
}
