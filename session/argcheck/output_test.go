package argcheck

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// CheckResult names where in the structured content a result goes wrong and what
// was expected there, passes what the output schema allows, and refuses a result
// without structured content and a schema it cannot check.
func TestCheckResult_NamesThePath(t *testing.T) {
	const item = `{"type":"object","properties":{"p":{"type":"number"}}}`
	for _, tc := range []struct{ schema, content, want string }{
		{`{"type":"object","properties":{"price":{"type":"number"}}}`, `{"price":12}`, ""},
		{`{"type":"object","properties":{"price":{"type":"number"}}}`, `{"price":"12"}`, "price: expected number, got string"},
		{`{"type":"object","properties":{"a":{"type":"object","properties":{"list":{"type":"array","items":` + item + `}}}}}`, `{"a":{"list":[{"p":1},{"p":"x"}]}}`, "a.list[*].p: expected number, got string"},
		{`{"type":"object","$defs":{"I":` + item + `},"properties":{"it":{"$ref":"#/$defs/I"}}}`, `{"it":{"p":"x"}}`, "it.p: expected number, got string"},
		{`{"type":"object","required":["price","q"]}`, `{}`, "price: required, but missing (and 1 more required properties)"},
		{`{"type":"object","properties":{"a":{"type":"object","required":["price"]}}}`, `{"a":{}}`, "a.price: required, but missing"},
		{`{"type":"object"}`, `[1]`, "structuredContent: expected object, got array"},
		{`{"type":"array","prefixItems":[{"type":"string"}]}`, `[1]`, "[0]: expected string, got integer"},
		{`{"type":"object","properties":{"n":{"type":["string","null"]}}}`, `{"n":1}`, "n: expected string or null, got integer"},
		{`{"type":"object","additionalProperties":false}`, `{"x":1}`, `structuredContent: unexpected additional properties ["x"]`},
		// an output schema may describe any value, not only an object
		{`{"type":"array","items":{"type":"string"}}`, `["a","b"]`, ""},
		{`true`, `3`, ""},
		{`null`, `3`, ""},
	} {
		var content any
		if err := json.Unmarshal([]byte(tc.content), &content); err != nil {
			t.Fatal(err)
		}
		err := LoadOutput(json.RawMessage(tc.schema)).CheckResult(content)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
			t.Errorf("%s under %.50s: %v, want %q", tc.content, tc.schema, err, tc.want)
		}
	}

	s := LoadOutput(json.RawMessage(`{"type":"object"}`))
	if err := s.CheckResult(nil); !errors.Is(err, ErrNoStructuredContent) {
		t.Errorf("no structured content: %v, want ErrNoStructuredContent", err)
	}
	if err := LoadOutput(json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`)).CheckResult(map[string]any{}); err == nil || !errors.Is(err, ErrExternalRef) {
		t.Errorf("an output schema with an outside $ref: %v, want it refused (ErrExternalRef)", err)
	}
	if err := LoadOutput(json.RawMessage(`{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`)).CheckResult(map[string]any{}); err == nil || !strings.Contains(err.Error(), "loops") {
		t.Errorf("an output schema whose $ref loops: %v, want it refused", err)
	}

	// The sentence is bounded, however long the server's names are.
	long := strings.Repeat("n", 5000)
	err := LoadOutput(json.RawMessage(`{"type":"object","properties":{"` + long + `":{"type":"number"}}}`)).CheckResult(map[string]any{long: "x"})
	if err == nil || len(err.Error()) > maxResultWords+len("…") || !strings.Contains(err.Error(), "…: expected number, got string") {
		t.Errorf("a long name: %.80q (%d bytes), want it cut, keeping what was expected", err, len(errText(err)))
	}
}

// The cache keeps input and output schemas apart: the same bytes read as an input
// schema check arguments, read as an output schema check a result.
func TestCache_CheckResult(t *testing.T) {
	var c Cache
	schema := json.RawMessage(`{"type":"object","properties":{"price":{"type":"number"}}}`)
	if err := c.CheckResult(schema, map[string]any{"price": "12"}); err == nil || err.Error() != "price: expected number, got string" {
		t.Errorf("a string price: %v", err)
	}
	if err := c.Check(schema, []byte(`{"price":"12"}`)); err == nil || !strings.Contains(err.Error(), `field "price"`) {
		t.Errorf("the same schema as an input schema: %v", err)
	}
	if err := c.CheckResult(schema, map[string]any{"price": 12.5}); err != nil {
		t.Errorf("a number price: %v", err)
	}
	if len(c.in) != 1 || len(c.out) != 1 {
		t.Errorf("the cache holds %d input and %d output schemas, want 1 and 1", len(c.in), len(c.out))
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A schema the validator refuses is refused in as few words as a mismatch, however
// long the server made the names in it (an outside $ref, a looping pointer): the
// words go to the agent, the audit log and the screens. What it was stays known.
func TestCheckResult_SchemaRefusalIsBounded(t *testing.T) {
	long := strings.Repeat("a", 100000)
	for _, tc := range []struct {
		name, schema string
		is           error
	}{
		{"an outside $ref", `{"type":"object","properties":{"n":{"$ref":"https://example.com/` + long + `"}}}`, ErrExternalRef},
		{"a looping $ref", `{"$defs":{"` + long + `":{"$ref":"#/$defs/` + long + `"}},"$ref":"#/$defs/` + long + `"}`, nil},
		{"a bad pattern", `{"type":"object","properties":{"s":{"type":"string","pattern":"(?=` + long + `"}}}`, nil},
	} {
		err := LoadOutput(json.RawMessage(tc.schema)).CheckResult(map[string]any{"n": 1})
		if err == nil || len(err.Error()) > maxResultWords+len("…") {
			t.Errorf("%s: %d bytes of refusal (%.80q), want at most %d", tc.name, len(errText(err)), errText(err), maxResultWords+len("…"))
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: %v, want it to wrap %v", tc.name, err, tc.is)
		}
	}
}

// A schema whose constraints the validator would pass over in the draft it checks
// (draft 2019-09's $recursiveRef; items as a list, the tuple of drafts before
// 2020-12, outside draft-07) is refused, not checked as if it allowed anything there:
// an agent reading the schema in its own draft would refuse what was passed.
// Draft-07's tuple is read as draft-07 reads it.
func TestCheckResult_RefusesWhatTheValidatorWouldSkip(t *testing.T) {
	const tuple = `"type":"array","items":[{"type":"string"}],"additionalItems":false`
	checkResultCases(t, []resultCase{
		{"$recursiveRef", `{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"type":"object","properties":{"n":{"type":"number"},"child":{"$recursiveRef":"#"}}}`,
			`{"n":1,"child":{"n":"x"}}`, "the output schema cannot be checked: the schema uses $recursiveRef or $recursiveAnchor (draft 2019-09), which airlock does not validate"},
		{"a tuple, no draft named", `{` + tuple + `}`, `["a",1]`, "the output schema cannot be checked: the schema's items at \"\" is a list (a tuple of drafts before 2020-12), which airlock checks only under draft-07"},
		{"a tuple in draft 2019-09", `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","properties":{"t":{` + tuple + `}}}`, `{"t":["a",1]}`,
			"the output schema cannot be checked: the schema's items at \"/properties/t\" is a list (a tuple of drafts before 2020-12), which airlock checks only under draft-07"},
		{"a tuple in draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#",` + tuple + `}`, `["a",1]`, "[*]: not: validated against <anonymous schema>"},
		{"a tuple in draft-07 that fits", `{"$schema":"http://json-schema.org/draft-07/schema#",` + tuple + `}`, `["a"]`, ""},
	})
}

// Results are checked as 64-bit floats, and an agent is given them as such (go-sdk
// decodes structured content into float64s and the gateway encodes those). A number
// of the schema that a float64 cannot hold exactly would be compared rounded: max
// 9007199254740995 rounds up to ...996 and let ...996 pass, which breaks the
// schema; such a schema is refused. Numbers a float64 holds pass as before, and a
// content number rounded on the way in is checked as what the agent gets.
func TestCheckResult_RefusesNumbersItCannotCompareExactly(t *testing.T) {
	checkResultCases(t, []resultCase{
		{"a maximum rounded up", `{"type":"object","properties":{"n":{"maximum":9007199254740995}}}`, `{"n":9007199254740996}`,
			`the output schema cannot be checked: the schema's number 9007199254740995 at "/properties/n/maximum" cannot be compared exactly: results are checked as 64-bit floats`},
		{"a const rounded", `{"const":9007199254740993}`, `9007199254740992`,
			`the output schema cannot be checked: the schema's number 9007199254740993 at "/const" cannot be compared exactly: results are checked as 64-bit floats`},
		{"a decimal rounded up", `{"exclusiveMinimum":0.29999999999999999}`, `0.3`,
			`the output schema cannot be checked: the schema's number 0.29999999999999999 at "/exclusiveMinimum" cannot be compared exactly: results are checked as 64-bit floats`},
		{"beyond float64", `{"type":"array","items":{"maximum":1e400}}`, `[1]`,
			`the output schema cannot be checked: the schema's number 1e400 at "/items/maximum" cannot be compared exactly: results are checked as 64-bit floats`},
		{"a float64 bound", `{"type":"object","properties":{"n":{"maximum":9007199254740992,"minimum":0.1,"multipleOf":0.5}}}`, `{"n":9007199254740992}`, ""},
		{"written longer, same value", `{"maximum":1.50, "minimum":1E0, "default":-0.0e5}`, `1.5`, ""},
		{"rounded down to zero", `{"minimum":1e-400}`, `0`,
			`the output schema cannot be checked: the schema's number 1e-400 at "/minimum" cannot be compared exactly: results are checked as 64-bit floats`},
		{"a content number rounded in", `{"maximum":9007199254740992}`, `9007199254740993`, ""},
		{"too big for its maximum", `{"maximum":9007199254740992}`, `9007199254740994`, "structuredContent: maximum: 9007199254740994/1 is greater than 9007199254740992.000000"},
	})
}

// An output schema with a key twice in one object means what each reader makes of
// it: encoding/json keeps the last, a strict reader refuses it, another keeps the
// first; and a lone surrogate escape names U+FFFD to encoding/json but itself to
// JavaScript. The agent is given the schema's bytes as listed, so such a schema is
// refused, not checked as one reading ("properties":{} after the price).
func TestCheckResult_RefusesASchemaReadTwoWays(t *testing.T) {
	for _, tc := range []struct{ name, schema, want string }{
		{"a keyword twice", `{"type":"object","properties":{"price":{"type":"number"}},"properties":{}}`, `duplicate key "properties"`},
		{"a property twice, one escaped", `{"type":"object","properties":{"price":{"type":"number"},"pr\u0069ce":{}}}`, `duplicate key "properties.price"`},
		{"a lone surrogate", `{"type":"object","properties":{"\ud800":{"type":"number"}}}`, `lone surrogate escape \ud800`},
	} {
		err := LoadOutput(json.RawMessage(tc.schema)).CheckResult(map[string]any{"price": "12"})
		if err == nil || !strings.HasPrefix(err.Error(), "the output schema cannot be checked: the schema is not read alike by every JSON reader: "+tc.want) {
			t.Errorf("%s: %v, want the schema refused: %s", tc.name, err, tc.want)
		}
	}
	if err := LoadOutput(json.RawMessage(`{"type":"object","properties":{"price":{"type":"number"}}}`)).CheckResult(map[string]any{"price": 1}); err != nil {
		t.Errorf("a schema read one way: %v", err)
	}
}

// resultCase is a schema, a structured content (JSON) and the error CheckResult
// gives ("": none).
type resultCase struct{ name, schema, content, want string }

// checkResultCases checks each case's content against its schema, the error's
// words exactly.
func checkResultCases(t *testing.T, cases []resultCase) {
	t.Helper()
	for _, tc := range cases {
		var content any
		if err := json.Unmarshal([]byte(tc.content), &content); err != nil {
			t.Fatal(err)
		}
		err := LoadOutput(json.RawMessage(tc.schema)).CheckResult(content)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
