package session

import (
	"errors"
	"io/fs"
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
// ones as the file stood when the listing was classified), for hazards: where a tier
// asks, such a rule lets some calls run unasked, so the tool's legs are unguarded.
func (m *Manager) allowRule(ref trust.Ref, configured []trust.Rule) string {
	for i := range configured {
		if configured[i].Policy == trust.Allow {
			return configured[i].Label()
		}
	}
	if m.engine != nil && m.engine.rules != nil {
		_, saved := m.engine.rules.forTool(ref)
		for i := range saved {
			if saved[i].Policy == trust.Allow {
				return saved[i].Label()
			}
		}
	}
	return ""
}

// ruleFor finds the rule that decides these arguments (nil when none). For a server
// on this machine (local), every path a glob compares is also resolved through
// symbolic links, and a glob allows only when the resolved path matches too; for a
// remote server the path is compared as cleaned (docs/rules.md).
func ruleFor(sets []*trust.RuleSet, rules [][]trust.Rule, args []byte, home string, local bool) *trust.Rule {
	n := 0
	for _, s := range sets {
		n += s.Len()
	}
	if n == 0 {
		return nil
	}
	a := trust.DecodeArgs(args, home, nil)
	if local {
		var paths []string
		for _, rs := range rules {
			paths = append(paths, a.GlobPaths(rs)...)
		}
		if len(paths) > 0 {
			real := make(map[string]string, len(paths))
			for _, p := range paths {
				if r, ok := resolvePath(p); ok {
					real[p] = r
				}
			}
			a = a.WithReal(real)
		}
	}
	return trust.MatchRuleSets(a, sets...)
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

// resolvePath resolves every symbolic link of an absolute, cleaned path: the longest
// part that exists is resolved, the rest (not yet created) appended. false when it
// cannot be resolved (a loop, a permission error): such a path never allows.
func resolvePath(p string) (string, bool) {
	native := filepath.FromSlash(p)
	rest := ""
	for cur := native; ; {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			out := filepath.ToSlash(filepath.Join(r, rest))
			return out, true
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", false
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", false
		}
		// a dangling link is a name that exists: refuse rather than guess
		if _, lerr := os.Lstat(cur); lerr == nil {
			return "", false
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
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

// ruleNotices checks the config's rules against a listing: a rule for a tool the
// server does not list, and a condition on a field the tool's input schema does not
// declare or whose type its matcher cannot compare (trust.CheckRuleFields). The
// config cannot know the schema, so this is said when the tool is listed, as a
// server notice and log line (and in check's output).
func ruleNotices(cfg config.Server, tools []listedTool) []string {
	var out []string
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
			out = append(out, "rules for "+name+" apply to no listed tool: the server does not list "+strconv.Quote(name))
			continue
		}
		for i := range rules {
			out = append(out, trust.CheckRuleFields(&rules[i], lt.wire.InputSchema)...)
		}
	}
	return out
}
