package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/BurntSushi/toml"

	"github.com/airlock-mcp/airlock/trust"
)

// Rule is one [[servers.NAME.tools.TOOL.rules]] table, compiled (docs/rules.md).
type Rule = trust.Rule

// ruleLineKey is the key keyLines records for element i of an array of tables.
func ruleLineKey(k toml.Key, i int) string { return k.String() + "[" + strconv.Itoa(i) + "]" }

// rules reads the rules array of one tool: each element a table with when (a table
// of fields, each a table of matchers), policy and reason. home expands "~" in globs.
// Each rule is named by its key path, as servers.fs.tools.write_file.rules[1].
func (b *builder) rules(k toml.Key, v value, home string) []trust.Rule {
	if !v.set {
		return nil
	}
	var elems []map[string]any
	switch x := v.v.(type) {
	case []map[string]any:
		elems = x
	case []any:
		for i, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				b.probs.wrongType(k, i, "want a table (when, policy, reason), got %s", describe(e))
				continue
			}
			elems = append(elems, m)
		}
	default:
		b.probs.wrongType(k, -1, "want an array of tables ([[%s]]), got %s", k.String(), describe(v.v))
		return nil
	}
	var out []trust.Rule
	for i, m := range elems {
		name := ruleLineKey(k, i)
		bad := func(sub string, format string, args ...any) {
			e := &Error{Key: name + sub, k: k, lineKey: name, Msg: fmt.Sprintf(format, args...)}
			b.probs = append(b.probs, e)
		}
		ok := true
		for _, key := range slices.Sorted(maps.Keys(m)) {
			switch key {
			case "when", "policy", "reason":
			default:
				bad("."+key, "unknown key in a rule (when, policy, reason)")
				ok = false
			}
		}
		var policy trust.Action
		if s, isStr := m["policy"].(string); isStr {
			a, known := trust.ParseAction(s)
			if !known {
				bad(".policy", "want allow|ask|deny, got %q", s)
				ok = false
			}
			policy = a
		} else {
			bad(".policy", "a rule needs policy = \"allow\", \"ask\" or \"deny\"")
			ok = false
		}
		reason := ""
		if r, has := m["reason"]; has {
			s, isStr := r.(string)
			if !isStr {
				bad(".reason", "want a string, got %s", describe(r))
				ok = false
			}
			reason = s
		}
		var conds []trust.Cond
		if w, has := m["when"]; has {
			when, isMap := w.(map[string]any)
			if !isMap {
				bad(".when", "want a table of fields, as when = { path = { glob = \"~/project/**\" } }, got %s", describe(w))
				ok = false
			}
			for _, field := range slices.Sorted(maps.Keys(when)) {
				ms, isMap := when[field].(map[string]any)
				if !isMap || len(ms) == 0 {
					bad(".when."+field, "want a table of matchers (equals, one_of, glob, prefix, host, max), got %s", describe(when[field]))
					ok = false
					continue
				}
				for _, kind := range slices.Sorted(maps.Keys(ms)) {
					c, err := trust.NewCond(field, trust.MatcherKind(kind), ms[kind], home)
					if err != nil {
						bad(".when."+field+"."+kind, "%s", err.Error())
						ok = false
						continue
					}
					conds = append(conds, c)
				}
			}
		}
		if !ok {
			continue
		}
		r, err := trust.NewRule(name, policy, reason, conds)
		if err != nil {
			bad("", "%s", err.Error())
			continue
		}
		out = append(out, r)
	}
	return out
}

// homeDir is the home folder from the environment: HOME, else USERPROFILE; "" unless
// absolute.
func homeDir(env func(string) (string, bool)) string {
	for _, k := range []string{"HOME", "USERPROFILE"} {
		if h, ok := env(k); ok && h != "" {
			if isAbs(h) {
				return h
			}
			return ""
		}
	}
	return ""
}

// nameRules sets each rule's Source to FILE:LINE (the file's base name).
func nameRules(c *Config, file string, lines map[string]int) {
	base := filepath.Base(file)
	for i := range c.Servers {
		for _, t := range c.Servers[i].Tools {
			for j := range t.Rules {
				if l, ok := lines[t.Rules[j].Name]; ok {
					t.Rules[j].Source = base + ":" + strconv.Itoa(l)
				} else {
					t.Rules[j].Source = base
				}
			}
		}
	}
}
