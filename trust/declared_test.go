package trust

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDeclared(t *testing.T) {
	tests := []struct {
		name string
		raw  json.RawMessage
		want Declared
	}{
		{name: "nil is absent", raw: nil, want: Declared{}},
		{name: "empty is absent", raw: json.RawMessage{}, want: Declared{}},
		{name: "whitespace is absent", raw: json.RawMessage(" \n"), want: Declared{}},
		{name: "null is absent", raw: json.RawMessage("null"), want: Declared{}},
		{name: "null with spaces is absent", raw: json.RawMessage(" null "), want: Declared{}},
		{
			name: "empty object: present, no hints",
			raw:  json.RawMessage(`{}`),
			want: Declared{Raw: json.RawMessage(`{}`)},
		},
		{
			name: "all four hints true",
			raw:  json.RawMessage(`{"readOnlyHint":true,"destructiveHint":true,"idempotentHint":true,"openWorldHint":true}`),
			want: Declared{
				Raw:   json.RawMessage(`{"readOnlyHint":true,"destructiveHint":true,"idempotentHint":true,"openWorldHint":true}`),
				Hints: Hints{ReadOnly: new(true), Destructive: new(true), Idempotent: new(true), OpenWorld: new(true)},
			},
		},
		{
			name: "false is kept apart from absent",
			raw:  json.RawMessage(`{"readOnlyHint":false,"openWorldHint":false}`),
			want: Declared{
				Raw:   json.RawMessage(`{"readOnlyHint":false,"openWorldHint":false}`),
				Hints: Hints{ReadOnly: new(false), OpenWorld: new(false)},
			},
		},
		{
			name: "non-bool values are absent",
			raw:  json.RawMessage(`{"readOnlyHint":"true","destructiveHint":1,"idempotentHint":null,"openWorldHint":{}}`),
			want: Declared{Raw: json.RawMessage(`{"readOnlyHint":"true","destructiveHint":1,"idempotentHint":null,"openWorldHint":{}}`)},
		},
		{
			name: "title and whitespace around values",
			raw:  json.RawMessage("{ \"title\" : \"Send mail\" , \"destructiveHint\" :\n false }"),
			want: Declared{
				Raw:   json.RawMessage("{ \"title\" : \"Send mail\" , \"destructiveHint\" :\n false }"),
				Hints: Hints{Destructive: new(false)},
				Title: "Send mail",
			},
		},
		{
			name: "non-string title is dropped",
			raw:  json.RawMessage(`{"title":42,"readOnlyHint":true}`),
			want: Declared{Raw: json.RawMessage(`{"title":42,"readOnlyHint":true}`), Hints: Hints{ReadOnly: new(true)}},
		},
		{
			name: "unknown keys are kept in Raw only",
			raw:  json.RawMessage(`{"x-vendor":{"a":1}}`),
			want: Declared{Raw: json.RawMessage(`{"x-vendor":{"a":1}}`)},
		},
		{
			name: "repeated key: last wins, as in the go-sdk",
			raw:  json.RawMessage(`{"readOnlyHint":false,"readOnlyHint":true}`),
			want: Declared{Raw: json.RawMessage(`{"readOnlyHint":false,"readOnlyHint":true}`), Hints: Hints{ReadOnly: new(true)}},
		},
		{
			name: "malformed JSON: no hints, raw kept",
			raw:  json.RawMessage(`{"readOnlyHint":true`),
			want: Declared{Raw: json.RawMessage(`{"readOnlyHint":true`)},
		},
		{
			name: "array: no hints, raw kept",
			raw:  json.RawMessage(`[{"readOnlyHint":true}]`),
			want: Declared{Raw: json.RawMessage(`[{"readOnlyHint":true}]`)},
		},
		{
			name: "string: no hints, raw kept",
			raw:  json.RawMessage(`"readOnly"`),
			want: Declared{Raw: json.RawMessage(`"readOnly"`)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseDeclared(tt.raw)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseDeclared(%s) mismatch (-want +got):\n%s", tt.raw, diff)
			}
		})
	}
}

func TestParseDeclaredCopiesRaw(t *testing.T) {
	raw := json.RawMessage(`{"readOnlyHint":true}`)
	d := ParseDeclared(raw)
	raw[2] = 'X' // the caller reuses its buffer
	if got, want := string(d.Raw), `{"readOnlyHint":true}`; got != want {
		t.Errorf("Raw = %s after the caller changed its buffer, want %s", got, want)
	}
}

func TestClaimsReadOnly(t *testing.T) {
	claim := ParseDeclared(json.RawMessage(`{"readOnlyHint":true}`))
	tests := []struct {
		name  string
		d     Declared
		trust ServerTrust
		want  bool
	}{
		{name: "untrusted claims", d: claim, trust: Untrusted, want: true},
		{name: "blocked claims", d: claim, trust: BlockedServer, want: true},
		{name: "trusted is believed, not a claim", d: claim, trust: Trusted, want: false},
		{name: "untrusted says false", d: ParseDeclared(json.RawMessage(`{"readOnlyHint":false}`)), trust: Untrusted, want: false},
		{name: "untrusted says nothing", d: Declared{}, trust: Untrusted, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClaimsReadOnly(tt.d, tt.trust); got != tt.want {
				t.Errorf("ClaimsReadOnly = %v, want %v", got, tt.want)
			}
		})
	}
}
