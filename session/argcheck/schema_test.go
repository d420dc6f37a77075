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
