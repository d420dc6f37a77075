package argcheck

import (
	"encoding/json"
	"strings"
	"testing"
)

const limitSchema = `{"type":"object","properties":{"n":{"type":"number"},"path":{"type":"string"}},"required":["n"]}`

// Check refuses what the schema does not allow, naming the field, and passes what
// it does.
func TestCheck_NamesTheField(t *testing.T) {
	s := Load(json.RawMessage(limitSchema))
	for _, tc := range []struct{ args, want string }{
		{`{"n":7}`, ""},
		{`{"n":7,"path":"/x"}`, ""},
		{`{"n":"99999999"}`, `field "n"`},
		{`{"path":"/x"}`, "n"},
		{`{"n":7,"path":5}`, `field "path"`},
		{`[1]`, "must be a JSON object"},
		// beyond float64: refused (jsonschema-go reads numbers as float64), naming
		// the field and why, wherever the number is
		{`{"n":1` + strings.Repeat("0", 400) + `}`, `field "n": the number 1000000000000000000000`},
		{`{"n":1e400}`, `field "n": the number 1e400 cannot be read exactly`},
		{`{"n":7,"path":{"deep":[1,-1e999]}}`, `field "path.deep[1]": the number -1e999 cannot be read exactly`},
		{`{"n":7,"a\u001bb":1e400}`, `field "a\x1bb": the number 1e400`},
	} {
		err := s.Check(json.RawMessage(tc.args))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%.40s: %v, want %q", tc.args, err, tc.want)
		}
	}
	if err := CheckArgs(json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`), json.RawMessage(`{}`)); err == nil {
		t.Errorf("a schema with an outside $ref checked, want it refused")
	}
}

func BenchmarkCheck(b *testing.B) {
	s := Load(json.RawMessage(limitSchema))
	args := json.RawMessage(`{"n":7,"path":"/srv/project/a.txt"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Check(args); err != nil {
			b.Fatal(err)
		}
	}
}

// An input schema is held to what an output schema is: one read two ways (a key
// twice, a lone surrogate), one whose constraints the validator passes over
// ($recursiveRef; items as a list outside draft-07), or one holding a number a
// float64 does not hold exactly cannot be checked, so a call against it is refused,
// not checked as one reading: the server may read "n" as a number where airlock
// read no type at all.
func TestCheck_RefusesWhatTheOutputPathRefuses(t *testing.T) {
	for _, tc := range []struct{ name, schema, args, want string }{
		{"a keyword twice", `{"type":"object","properties":{"n":{"type":"number"}},"properties":{}}`, `{"n":"99999999"}`,
			`the tool's input schema cannot be checked: the schema is not read alike by every JSON reader: duplicate key "properties" at byte 66`},
		{"a property twice, one escaped", `{"type":"object","properties":{"n":{"type":"number"},"\u006e":{}}}`, `{"n":"x"}`,
			`the tool's input schema cannot be checked: the schema is not read alike by every JSON reader: duplicate key "properties.n" at byte 61`},
		{"$recursiveRef", `{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"type":"object","properties":{"n":{"type":"number"},"child":{"$recursiveRef":"#"}}}`,
			`{"n":1,"child":{"n":"x"}}`, "the tool's input schema cannot be checked: the schema uses $recursiveRef or $recursiveAnchor (draft 2019-09), which airlock does not validate"},
		{"a tuple outside draft-07", `{"type":"object","properties":{"t":{"type":"array","items":[{"type":"string"}],"additionalItems":false}}}`, `{"t":["a",1]}`,
			`the tool's input schema cannot be checked: the schema's items at "/properties/t" is a list (a tuple of drafts before 2020-12), which airlock checks only under draft-07`},
		{"a maximum rounded up", `{"type":"object","properties":{"n":{"maximum":9007199254740995}}}`, `{"n":9007199254740996}`,
			`the tool's input schema cannot be checked: the schema's number 9007199254740995 at "/properties/n/maximum" cannot be compared exactly: arguments are checked as 64-bit floats`},
		{"read one way", `{"type":"object","properties":{"n":{"type":"number","maximum":9007199254740991}}}`, `{"n":7}`, ""},
		{"a draft-07 tuple", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"t":{"type":"array","items":[{"type":"string"}]}}}`, `{"t":["a"]}`, ""},
	} {
		err := Load(json.RawMessage(tc.schema)).Check(json.RawMessage(tc.args))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
