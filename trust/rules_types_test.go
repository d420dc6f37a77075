package trust

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// evalTyped runs one condition against a JSON argument object, the field's type
// taken from the tool's input schema.
func evalTyped(c Cond, schema, args string) result {
	return c.eval(DecodeArgs([]byte(args), testHome, nil).WithSchema(ParseSchema([]byte(schema))))
}

const (
	numberSchema  = `{"type":"object","properties":{"n":{"type":"number"}}}`
	integerSchema = `{"type":"object","properties":{"n":{"type":"integer"}}}`
	stringSchema  = `{"type":"object","properties":{"n":{"type":"string"}}}`
	boolSchema    = `{"type":"object","properties":{"n":{"type":"boolean"}}}`
	eitherSchema  = `{"type":"object","properties":{"n":{"type":["string","number"]}}}`
	untypedSchema = `{"type":"object","properties":{"n":{"description":"anything"}}}`
	arraySchema   = `{"type":"object","properties":{"n":{"type":"array"}}}`
)

// A matcher compares a value as the type the input schema declares for its field: a
// value of another type is one a lax server coerces, so it cannot be compared safely
// (it never allows; a deny or ask rule on it holds). Numbers compare exactly and, as
// a float64 reader (JavaScript, most JSON libraries) holds them, where the two
// readings disagree the value cannot be compared safely either.
func TestRules_TypesFromSchema(t *testing.T) {
	cases := []struct {
		name   string
		kind   MatcherKind
		val    any
		schema string
		args   string
		want   result
	}{
		// max on a number field counts nothing: a string is a coerced number
		{"max number field string value", MatchMax, int64(50), numberSchema, `{"n":"99999999"}`, unsafe},
		{"max number field short string", MatchMax, int64(50), numberSchema, `{"n":"9"}`, unsafe},
		{"max integer field string value", MatchMax, int64(50), integerSchema, `{"n":"99999999"}`, unsafe},
		{"max number field number under", MatchMax, int64(50), numberSchema, `{"n":49.5}`, matched},
		{"max number field number over", MatchMax, int64(50), numberSchema, `{"n":99999999}`, noMatch},
		{"max string field counts characters", MatchMax, int64(3), stringSchema, `{"n":"äöü"}`, matched},
		{"max string field too long", MatchMax, int64(3), stringSchema, `{"n":"abcd"}`, noMatch},
		{"max string field number value", MatchMax, int64(50), stringSchema, `{"n":7}`, unsafe},
		{"max string or number field string value", MatchMax, int64(50), eitherSchema, `{"n":"99999999"}`, unsafe},
		{"max untyped field string value", MatchMax, int64(50), untypedSchema, `{"n":"99999999"}`, unsafe},
		{"max array field", MatchMax, int64(2), arraySchema, `{"n":[1,2]}`, matched},
		{"max array field string value", MatchMax, int64(2), arraySchema, `{"n":"ab"}`, unsafe},
		{"max 2^53+1 over 2^53", MatchMax, int64(1 << 53), numberSchema, `{"n":9007199254740993}`, unsafe},
		{"max 2^60 under 2^62", MatchMax, int64(1 << 62), integerSchema, `{"n":1152921504606846976}`, unsafe},
		{"max -2^60", MatchMax, int64(10), integerSchema, `{"n":-1152921504606846976}`, unsafe},
		{"max 2^53 itself", MatchMax, int64(1 << 62), integerSchema, `{"n":9007199254740992}`, matched},
		{"max just over as decimals", MatchMax, int64(50), numberSchema, `{"n":50.000000000000001}`, unsafe},
		{"max exactly", MatchMax, int64(50), integerSchema, `{"n":50}`, matched},
		// a float for an integer
		{"integer field fraction", MatchEquals, int64(1), integerSchema, `{"n":1.5}`, unsafe},
		{"integer field 1.0", MatchEquals, int64(1), integerSchema, `{"n":1.0}`, unsafe},
		{"integer field 1e2 vs 100", MatchEquals, int64(100), integerSchema, `{"n":1e2}`, unsafe},
		{"integer field 100", MatchEquals, int64(100), integerSchema, `{"n":100}`, matched},
		{"integer field max fraction", MatchMax, int64(100), integerSchema, `{"n":1.5}`, unsafe},
		{"number field 1e2 vs 100", MatchEquals, int64(100), numberSchema, `{"n":1e2}`, matched},
		{"number field 100.0 vs 100", MatchEquals, int64(100), numberSchema, `{"n":100.0}`, matched},
		// -0 is 0 in every reading
		{"integer field -0", MatchEquals, int64(0), integerSchema, `{"n":-0}`, matched},
		{"number field -0.0", MatchEquals, int64(0), numberSchema, `{"n":-0.0}`, matched},
		// exact integers beyond 2^53
		{"2^53+1 vs equals 2^53", MatchEquals, int64(1 << 53), integerSchema, `{"n":9007199254740993}`, unsafe},
		{"2^53+1 vs equals 2^53+1", MatchEquals, int64(1<<53 + 1), integerSchema, `{"n":9007199254740993}`, matched},
		{"big integer near miss", MatchEquals, int64(1234567890123456789), integerSchema, `{"n":1234567890123456700}`, unsafe},
		{"big integer exact", MatchEquals, int64(1234567890123456789), integerSchema, `{"n":1234567890123456789}`, matched},
		{"big integer far", MatchEquals, int64(1234567890123456789), integerSchema, `{"n":1234567890000000000}`, noMatch},
		{"one_of big integer near miss", MatchOneOf, []any{int64(5), int64(1234567890123456789)}, numberSchema, `{"n":1234567890123456700}`, unsafe},
		{"decimal near miss", MatchEquals, 0.1, numberSchema, `{"n":0.10000000000000001}`, unsafe},
		{"decimal exact", MatchEquals, 0.1, numberSchema, `{"n":0.10}`, matched},
		{"huge exponent", MatchEquals, int64(1), numberSchema, `{"n":1e999999999}`, unsafe},
		{"tiny exponent", MatchEquals, int64(0), numberSchema, `{"n":1e-999999999}`, unsafe},
		// a string for a number, a number for a string, a string for a boolean
		{"equals number field string value", MatchEquals, int64(5), numberSchema, `{"n":"5"}`, unsafe},
		{"equals string field number value", MatchEquals, "5", stringSchema, `{"n":5}`, unsafe},
		{"equals boolean field string value", MatchEquals, true, boolSchema, `{"n":"true"}`, unsafe},
		{"equals boolean field", MatchEquals, true, boolSchema, `{"n":true}`, matched},
		{"equals string or number field string", MatchEquals, "5", eitherSchema, `{"n":"5"}`, matched},
		// a server that takes either may read 5 as "5": a deny on "5" holds for it
		{"equals string or number field number", MatchEquals, "5", eitherSchema, `{"n":5}`, unsafe},
		{"equals string or number field other number", MatchEquals, int64(5), eitherSchema, `{"n":"6"}`, unsafe},
		{"equals string or number field same type differs", MatchEquals, "5", eitherSchema, `{"n":"6"}`, noMatch},
		{"prefix number field", MatchPrefix, "9", numberSchema, `{"n":"99"}`, unsafe},
		// a field declared without a type: another type than the operand's may be coerced
		{"untyped field string for number", MatchEquals, int64(5), untypedSchema, `{"n":"5"}`, unsafe},
		{"untyped field number for string", MatchOneOf, []any{"5", "6"}, untypedSchema, `{"n":5}`, unsafe},
		{"untyped field string for boolean", MatchEquals, true, untypedSchema, `{"n":"true"}`, unsafe},
		{"untyped field same type", MatchEquals, "fast", untypedSchema, `{"n":"fast"}`, matched},
		{"untyped field other string", MatchEquals, "fast", untypedSchema, `{"n":"slow"}`, noMatch},
		{"prefix string field", MatchPrefix, "9", stringSchema, `{"n":"99"}`, matched},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			c := mustCond(t, "n", tt.kind, tt.val)
			if got := evalTyped(c, tt.schema, tt.args); got != tt.want {
				t.Errorf("%s %v on %s with schema %s = %v, want %v", tt.kind, tt.val, tt.args, tt.schema, got, tt.want)
			}
		})
	}
}

// Without a schema, numbers still compare exactly, never through float64.
func TestRules_ExactNumbers(t *testing.T) {
	cases := []struct {
		name string
		val  any
		args string
		want result
	}{
		{"big integer near miss", int64(1234567890123456789), `{"n":1234567890123456700}`, unsafe},
		{"big integer exact", int64(1234567890123456789), `{"n":1234567890123456789}`, matched},
		{"2^53+1 vs 2^53", int64(1 << 53), `{"n":9007199254740993}`, unsafe},
		{"-0", int64(0), `{"n":-0}`, matched},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			c := mustCond(t, "n", MatchEquals, tt.val)
			if got := evalCond(c, tt.args, nil); got != tt.want {
				t.Errorf("equals %v on %s = %v, want %v", tt.val, tt.args, got, tt.want)
			}
			// and the index files the rule where the call finds it
			for _, p := range []Action{Allow, Deny} {
				r := mustRule(t, "r", p, c)
				want := tt.want == matched || tt.want == unsafe && p != Allow
				if got := NewRuleSet([]Rule{r}).Match(DecodeArgs([]byte(tt.args), testHome, nil)) != nil; got != want {
					t.Errorf("%s rule equals %v on %s: matched = %v, want %v", p, tt.val, tt.args, got, want)
				}
			}
		})
	}
}

// A rule that can never match is reported: a condition on a field the schema does not
// declare, or a matcher that cannot compare the declared type.
func TestRules_RuleProblems(t *testing.T) {
	cases := []struct {
		name   string
		kind   MatcherKind
		field  string
		val    any
		schema string
		want   string
	}{
		{"undeclared field", MatchGlob, "pth", "**/.ssh/**", `{"type":"object","properties":{"path":{"type":"string"}}}`, `declares no field "pth"`},
		{"glob on a number", MatchGlob, "n", "/x/**", numberSchema, "cannot compare"},
		{"max on a boolean", MatchMax, "n", int64(3), boolSchema, "cannot compare"},
		{"equals string on an integer", MatchEquals, "n", "5", integerSchema, "cannot compare"},
		{"equals fraction on an integer", MatchEquals, "n", 1.5, integerSchema, "cannot compare"},
		{"schema not an object", MatchEquals, "n", "5", `[1]`, "not a JSON object"},
		{"fine", MatchEquals, "n", int64(5), integerSchema, ""},
		{"fine untyped", MatchEquals, "n", int64(5), untypedSchema, ""},
		{"schema lists no fields", MatchEquals, "n", int64(5), `{"type":"object"}`, ""},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRule(t, "servers.s.tools.t.rules[0]", Deny, mustCond(t, tt.field, tt.kind, tt.val))
			r.Source = "config.toml:7"
			got := strings.Join(RuleProblems(&r, ParseSchema([]byte(tt.schema))), "\n")
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Fatalf("problems = %q, want one containing %q", got, tt.want)
			}
			if tt.want != "" && !strings.Contains(got, "servers.s.tools.t.rules[0] (config.toml:7)") {
				t.Errorf("problems = %q, want the rule's name and line", got)
			}
		})
	}
}

// The index finds every rule a typed number could match or not be compared safely
// with: it picks the rule comparing every rule picks.
func TestRules_IndexAgreesWithScanTyped(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 4))
	ops := []any{int64(0), int64(100), int64(1 << 53), int64(1<<53 + 1), int64(1234567890123456789), 0.1, 2.5, "100", true}
	argsList := []string{`{}`, `{"n":0}`, `{"n":-0}`, `{"n":100}`, `{"n":1e2}`, `{"n":100.0}`, `{"n":9007199254740993}`, `{"n":9007199254740992}`,
		`{"n":1234567890123456700}`, `{"n":1234567890123456789}`, `{"n":0.10000000000000001}`, `{"n":0.1}`, `{"n":"100"}`, `{"n":true}`,
		`{"n":1e999999}`, `{"n":[1]}`, `{"n":2.5}`}
	schemas := []string{integerSchema, numberSchema, stringSchema, untypedSchema, eitherSchema}
	for round := range 300 {
		var rules []Rule
		for i := range 1 + rng.IntN(8) {
			var c Cond
			switch rng.IntN(3) {
			case 0:
				c = mustCond(t, "n", MatchEquals, ops[rng.IntN(len(ops))])
			case 1:
				c = mustCond(t, "n", MatchOneOf, []any{ops[rng.IntN(len(ops))], ops[rng.IntN(len(ops))]})
			default:
				c = mustCond(t, "n", MatchMax, []any{int64(100), int64(1 << 53), 0.5}[rng.IntN(3)])
			}
			rules = append(rules, mustRule(t, fmt.Sprintf("r%d", i), []Action{Allow, Ask, Deny}[rng.IntN(3)], c))
		}
		set := NewRuleSet(rules)
		for _, sc := range schemas {
			s := ParseSchema([]byte(sc))
			for _, args := range argsList {
				want := scanMatch(rules, DecodeArgs([]byte(args), testHome, nil).WithSchema(s))
				got := set.Match(DecodeArgs([]byte(args), testHome, nil).WithSchema(s))
				if want != got {
					t.Fatalf("round %d, %s with %s: index picked %v, scan %v", round, args, sc, name(got), name(want))
				}
			}
		}
	}
}
