package trust

import (
	"bytes"
	"encoding/json"
)

// ParseDeclared reads a tool's "annotations" JSON exactly as the server sent it.
// A nil or empty raw, or the JSON literal null, means the tool had no annotations:
// the result is the zero Declared, with Raw nil. Otherwise Raw is a copy of raw as
// given, and Hints and Title are parsed from it: each hint is set only when its value
// is the JSON literal true or false (absent, null, or any other value leaves it nil),
// and Title only when "title" is a JSON string. Malformed JSON, or JSON that is not an
// object, yields no hints and no title but keeps Raw, so the UI can show what came.
func ParseDeclared(raw json.RawMessage) Declared {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return Declared{}
	}
	d := Declared{Raw: bytes.Clone(raw)}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return d
	}
	d.Hints = Hints{
		ReadOnly:    jsonBool(fields["readOnlyHint"]),
		Destructive: jsonBool(fields["destructiveHint"]),
		Idempotent:  jsonBool(fields["idempotentHint"]),
		OpenWorld:   jsonBool(fields["openWorldHint"]),
	}
	if v, ok := fields["title"]; ok {
		// A non-string title is dropped rather than an error: the raw bytes stay in Raw.
		var title string
		if json.Unmarshal(v, &title) == nil {
			d.Title = title
		}
	}
	return d
}

// jsonBool returns a pointer to the boolean v holds, or nil when v is absent or is
// anything but a JSON boolean. json.Unmarshal alone would leave null as "unset but no
// error", which is why the literal is compared.
func jsonBool(v json.RawMessage) *bool {
	switch string(bytes.TrimSpace(v)) {
	case "true":
		b := true
		return &b
	case "false":
		b := false
		return &b
	}
	return nil
}

// ClaimsReadOnly reports whether a server that airlock does not trust (untrusted or
// blocked) declared readOnlyHint=true for a tool: a claim airlock ignores, and which the
// UI shows as "claims read-only" beside the tier it really gets.
func ClaimsReadOnly(d Declared, st ServerTrust) bool {
	return st != Trusted && d.Hints.ReadOnly != nil && *d.Hints.ReadOnly
}
