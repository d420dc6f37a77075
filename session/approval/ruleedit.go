package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/tomlw"

	"github.com/BurntSushi/toml"

	"github.com/airlock-mcp/airlock/trust"
)

// FormatWhen is a rule's conditions as one TOML inline table, the text the dialog
// lets the person edit: { url = { host = ["docs.python.org"] } }. ParseWhen reads it
// back.
func FormatWhen(w map[string]map[string]any) string {
	if len(w) == 0 {
		return "{}"
	}
	var fields []string
	for _, f := range slices.Sorted(maps.Keys(w)) {
		var ms []string
		for _, k := range slices.Sorted(maps.Keys(w[f])) {
			ms = append(ms, tomlw.ASCII.Key(k)+" = "+tomlValue(w[f][k]))
		}
		fields = append(fields, tomlw.ASCII.Key(f)+" = { "+strings.Join(ms, ", ")+" }")
	}
	return "{ " + strings.Join(fields, ", ") + " }"
}

func tomlValue(v any) string {
	switch x := v.(type) {
	case string:
		return tomlw.ASCII.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case json.Number:
		return x.String()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = tomlValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []string:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = tomlw.ASCII.Quote(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return tomlw.ASCII.Quote(fmt.Sprint(v))
}

// ParseWhen reads a rule's conditions as the person edited them: one TOML inline
// table of fields, each a table of matchers ({ path = { glob = "~/project/**" } }).
// Anything else (a second key, a line break, a field that is not a table) is refused
// with the reason.
func ParseWhen(text string) (map[string]map[string]any, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, errors.New("the conditions are empty: write {} to match every call")
	}
	if strings.ContainsAny(text, "\r\n") {
		return nil, errors.New("the conditions must be one line")
	}
	var doc map[string]any
	md, err := toml.Decode("when = "+text, &doc)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return nil, fmt.Errorf("not a TOML inline table: %s", perr.Message)
		}
		return nil, fmt.Errorf("not a TOML inline table: %v", err)
	}
	if len(doc) != 1 || len(md.Keys()) == 0 || md.Keys()[0].String() != "when" {
		return nil, errors.New("write one inline table, such as { path = { glob = \"~/project/**\" } }")
	}
	raw, ok := doc["when"].(map[string]any)
	if !ok {
		return nil, errors.New("write one inline table, such as { path = { glob = \"~/project/**\" } }")
	}
	out := make(map[string]map[string]any, len(raw))
	for f, v := range raw {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("when.%s: a field takes a table of matchers, such as { glob = \"…\" }", f)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("when.%s: no matcher (equals, one_of, glob, prefix, host, max)", f)
		}
		out[f] = m
	}
	return out, nil
}

// CheckProposal checks a rule before it is saved, as the config's rules are checked:
// every matcher compiles (a known matcher, an operand of its type, an absolute glob,
// a host pattern), and, where the tool's input schema declares its properties, every
// condition names a declared field of a type its matcher can compare (an edit that
// could never match is refused rather than saved). An allow rule for a destructive
// tool is refused (every destructive call keeps its question), as is a proposal for
// another tool and one whose conditions hold something shaped like a secret. The
// error says why; nothing is saved.
func CheckProposal(p model.RuleProposal, policy trust.Action, tool model.ToolInfo) error {
	if p.Server != tool.Ref.Server || p.Tool != tool.Ref.Tool {
		return fmt.Errorf("the rule is for %s, not %s", trust.Ref{Server: p.Server, Tool: p.Tool}.Qualified(), tool.Ref.Qualified())
	}
	if policy == trust.Allow && tool.Class.Tier >= trust.TierDestructive {
		return fmt.Errorf("%s is %s: it is never always allowed, every call asks", tool.Ref.Qualified(), tool.Class.Tier)
	}
	if policy != trust.Allow && policy != trust.Deny && policy != trust.Ask {
		return errors.New("policy must be allow, ask or deny")
	}
	if err := refuseSecrets(p.When, nil); err != nil {
		return err
	}
	r, err := compileOne(SavedRule{ID: "the new rule", Server: p.Server, Tool: p.Tool, When: p.When, Policy: policy.String(), Reason: p.Reason}, homeDir(), RulesFile)
	if err != nil {
		return err
	}
	if !declaresProperties(tool.InputSchema) {
		return nil // nothing to check the fields against
	}
	if problems := trust.CheckRuleFields(&r, tool.InputSchema); len(problems) > 0 {
		return errors.New(strings.TrimPrefix(problems[0], "rule "+r.Label()+": "))
	}
	return nil
}

// declaresProperties reports whether an input schema lists its fields.
func declaresProperties(schema json.RawMessage) bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	return json.Unmarshal(schema, &s) == nil && len(s.Properties) > 0
}
