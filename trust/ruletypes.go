package trust

import (
	"encoding/json"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Schema is a tool's input schema as argument rules read it: the JSON type each
// argument field declares. A matcher compares a value as that type, and a value of
// another type (a string where a number is declared, a fraction where an integer is)
// is one a lax server coerces, so it cannot be compared safely (docs/rules.md).
type Schema struct {
	root map[string]any
	// bad: the schema is not a JSON object, so no field is declared.
	bad bool
}

// ParseSchema reads a tool's input schema for rules. A schema that is not a JSON
// object declares no field.
func ParseSchema(inputSchema []byte) *Schema {
	s := &Schema{}
	if err := json.Unmarshal(inputSchema, &s.root); err != nil || s.root == nil {
		s.root, s.bad = nil, true
	}
	return s
}

// field is the schema of the argument at a dotted path; nil when the schema does not
// declare it.
func (s *Schema) field(path []string) map[string]any {
	node := s.root
	for _, part := range path {
		props, _ := node["properties"].(map[string]any)
		next, ok := props[part].(map[string]any)
		if !ok {
			return nil
		}
		node = next
	}
	return node
}

// WithSchema returns a with the tool's input schema, so that each field is compared
// as the type it declares. Without one (nil), values are compared as the types they
// have, which only a caller that checked nothing else should rely on: session always
// passes the listed schema.
func (a Args) WithSchema(s *Schema) Args {
	a.schema = s
	return a
}

// number is a JSON number read two ways: exactly (r), as a server that keeps integers
// and decimals exact reads it (Python, big-number libraries), and as a float64 (f), as
// JavaScript and most JSON libraries read it. A comparison on which the two readings
// disagree cannot be made safely.
type number struct {
	r *big.Rat
	f float64
	// intText: written as an integer (digits, an optional minus, no fraction or
	// exponent), so every reader takes it as one.
	intText bool
}

// Bounds on a number that is compared at all: beyond them a value cannot be compared
// safely (reading 1e999999999 exactly would take the machine).
const (
	maxNumberText     = 512
	maxNumberExponent = 400
)

// parseNumber reads a JSON number's text; false when it is not one, is beyond the
// bounds, or is beyond float64 (a reader that holds floats sees infinity).
func parseNumber(text string) (number, bool) {
	if text == "" || len(text) > maxNumberText {
		return number{}, false
	}
	if i := strings.IndexAny(text, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(text[i+1:], "+"))
		if err != nil || e > maxNumberExponent || e < -maxNumberExponent {
			return number{}, false
		}
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return number{}, false
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return number{}, false
	}
	if f == 0 {
		f = 0 // -0 is 0 in both readings
	}
	n := number{r: r, f: f, intText: true}
	for i, c := range text {
		if (c < '0' || c > '9') && !(i == 0 && c == '-') {
			n.intText = false
			break
		}
	}
	return n, true
}

// toNumber reads a rule operand as the config decoded it, or an argument's
// json.Number. A float64 operand is the decimal it was written as (0.1 is one tenth).
func toNumber(v any) (number, bool) {
	switch n := v.(type) {
	case int64:
		return number{r: new(big.Rat).SetInt64(n), f: float64(n), intText: true}, true
	case int:
		return number{r: new(big.Rat).SetInt64(int64(n)), f: float64(n), intText: true}, true
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return number{}, false
		}
		return parseNumber(strconv.FormatFloat(n, 'g', -1, 64))
	case json.Number:
		return parseNumber(string(n))
	}
	return number{}, false
}

// maxSafe is 2^53: beyond it a float64 reader no longer holds every integer.
var maxSafe = new(big.Rat).SetInt64(1 << 53)

// withinSafeRange reports whether the number is within ±2^53, where every reader holds
// integers exactly. max never allows a number beyond (a range compared in readings
// that round differently); equals and one_of compare it exactly.
func (n number) withinSafeRange() bool {
	return new(big.Rat).Abs(n.r).Cmp(maxSafe) <= 0
}

// compareNumbers is the result of a comparison made in both readings: the same
// answer in both, or unsafe.
func compareNumbers(exact, float bool) result {
	switch {
	case exact && float:
		return matched
	case !exact && !float:
		return noMatch
	}
	return unsafe
}

// equalNumbers compares an operand and a value: equal exactly matches (and then the
// float readings are equal too); equal only as float64 (1234567890123456700 and
// 1234567890123456789, 2^53 and 2^53+1) is unsafe.
func equalNumbers(want, got number) result {
	return compareNumbers(want.r.Cmp(got.r) == 0, want.f == got.f)
}

// declaredTypes is the JSON types the field at path declares ("integer" among them),
// computed once per call; known is false without a schema (values are then compared
// as the types they have).
func (fm *fieldVal) declaredTypes(a Args, path []string) (types []string, known bool) {
	if a.schema == nil {
		return nil, false
	}
	if !fm.typesDone {
		fm.typesDone = true
		if node := a.schema.field(path); node != nil {
			fm.types = schemaTypes(node["type"])
		}
	}
	return fm.types, true
}

// accepts reports whether the value's JSON type is one the field declares (any type
// where it declares none, or without a schema). A number is accepted where
// "integer" is declared only when written as an integer: readers disagree on whether
// 1.0 or 1e2 is one.
func (fm *fieldVal) accepts(a Args, path []string) bool {
	types, known := fm.declaredTypes(a, path)
	if !known || len(types) == 0 {
		return true
	}
	switch v := fm.v.(type) {
	case json.Number:
		if slices.Contains(types, "number") {
			return true
		}
		n, ok := fm.number()
		return ok && n.intText && slices.Contains(types, "integer")
	case string:
		return slices.Contains(types, "string")
	case bool:
		return slices.Contains(types, "boolean")
	case []any:
		return slices.Contains(types, "array")
	case map[string]any:
		return slices.Contains(types, "object")
	case nil:
		return slices.Contains(types, "null")
	default:
		_ = v
	}
	return false
}

// coerces reports whether a server may read the field's value as another scalar
// type than it has: the schema declares the field with no type, or with more than
// one scalar type (["string","number"]: a server that takes either may treat "5"
// and 5 alike). equals and one_of then cannot compare an operand of another type
// with it safely.
func (fm *fieldVal) coerces(a Args, path []string) bool {
	types, known := fm.declaredTypes(a, path)
	if !known {
		return false
	}
	kinds := 0
	for _, group := range [][]string{{"string"}, {"number", "integer"}, {"boolean"}} {
		if slices.ContainsFunc(group, func(t string) bool { return slices.Contains(types, t) }) {
			kinds++
		}
	}
	return len(types) == 0 || kinds > 1
}

// countsCharacters reports whether max may count a string value's characters: only
// where the schema declares the field a string and not a number (a server that takes
// either coerces "99999999" to a number), or without a schema.
func (fm *fieldVal) countsCharacters(a Args, path []string) bool {
	types, known := fm.declaredTypes(a, path)
	if !known {
		return true
	}
	return slices.Contains(types, "string") && !slices.Contains(types, "number") && !slices.Contains(types, "integer")
}

// number is the value read as a number, once per call.
func (fm *fieldVal) number() (number, bool) {
	if !fm.numDone {
		fm.numDone = true
		if x, ok := fm.v.(json.Number); ok {
			fm.num, fm.numOK = parseNumber(string(x))
		}
	}
	return fm.num, fm.numOK
}

// scalarOf is the value as equals and one_of compare it, once per call.
func (fm *fieldVal) scalarOf() (scalar, bool) {
	switch x := fm.v.(type) {
	case string:
		return scalar{kind: 's', s: x}, true
	case bool:
		return scalar{kind: 'b', b: x}, true
	case json.Number:
		n, ok := fm.number()
		return scalar{kind: 'n', num: n}, ok
	}
	return scalar{}, false
}

// RuleProblems reports, one sentence each, why a rule can never match the tool
// whose input schema is s: a condition on a field the schema does not declare, or a
// matcher that cannot compare the type declared (glob, prefix and host compare
// strings; max numbers, integers, strings and arrays; equals and one_of their
// operands' types, a fraction never an integer). Such a rule is broken: session makes
// its tool ask for every call until it is fixed. nil when it can match.
func RuleProblems(r *Rule, s *Schema) []string {
	if s == nil || s.bad {
		return []string{"rule " + r.Label() + ": the tool's input schema is not a JSON object, so its fields cannot be checked"}
	}
	if _, ok := s.root["properties"]; !ok {
		// A schema that lists no fields at all (any object goes) says nothing to
		// check a field against; its values are compared as the types they have,
		// and max never counts a string's characters there.
		return nil
	}
	var out []string
	for i := range r.When {
		c := &r.When[i]
		node := s.field(c.path)
		if node == nil {
			out = append(out, "rule "+r.Label()+": when."+c.Field+": the tool's input schema declares no field "+strconv.Quote(c.Field))
			continue
		}
		types := schemaTypes(node["type"])
		if len(types) == 0 {
			continue
		}
		var want []string
		switch c.Kind {
		case MatchGlob, MatchPrefix, MatchHost:
			want = []string{"string"}
		case MatchMax:
			want = []string{"number", "integer", "string", "array"}
		case MatchEquals, MatchOneOf:
			for _, sc := range c.scalar {
				switch sc.kind {
				case 's':
					want = append(want, "string")
				case 'b':
					want = append(want, "boolean")
				case 'n':
					want = append(want, "number")
					if sc.num.r.IsInt() {
						want = append(want, "integer")
					}
				}
			}
		}
		if !slices.ContainsFunc(types, func(t string) bool { return slices.Contains(want, t) }) {
			out = append(out, "rule "+r.Label()+": when."+c.Field+"."+string(c.Kind)+": the tool declares "+c.Field+" as "+strings.Join(types, " or ")+", which "+string(c.Kind)+" cannot compare")
		}
	}
	return out
}

// BrokenRule is the ask rule that stands for r while r can never match (problems,
// from RuleProblems): fail closed, the tool asks for every call until the rule is
// fixed, since a broken deny rule must never let a call run and a broken allow rule
// must not allow. It outranks a grant as an ask rule does; a deny rule that matches
// still denies.
func BrokenRule(r *Rule, problems []string) *Rule {
	why := make([]string, len(problems))
	for i, p := range problems {
		why[i] = strings.TrimPrefix(p, "rule "+r.Label()+": ")
	}
	return &Rule{Name: r.Name, Source: r.Source, Policy: Ask, Broken: true,
		Reason: "it can never match (" + strings.Join(why, "; ") + "), so every call of this tool asks until the rule is fixed"}
}
