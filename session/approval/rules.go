package approval

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airlock-mcp/airlock/internal/model"

	"github.com/airlock-mcp/airlock/trust"
)

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

// CheckRules reads a tool's input schema for its rules and finds the rules that can
// never match it, by name (nil when none).
func CheckRules(rules []trust.Rule, inputSchema []byte) (*trust.Schema, map[string][]string) {
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
func brokenRule(tool model.ToolInfo, lists [][]trust.Rule, schema *trust.Schema) *trust.Rule {
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

// homeDir is the home folder that expands "~" in path arguments; "" when unknown.
func homeDir() string {
	h, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(h) {
		return ""
	}
	return filepath.ToSlash(strings.TrimSuffix(h, string(filepath.Separator)))
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

// CompiledRules is every tool's remembered rules as rules.toml stands now, compiled,
// read once for a whole listing (nil when no rules are kept).
func (e *Engine) CompiledRules() map[trust.Ref][]trust.Rule {
	if e == nil || e.rules == nil {
		return nil
	}
	return e.rules.byToolNow()
}
