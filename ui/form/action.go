// Package form builds input forms from JSON Schemas: the call form for a
// tool's input schema (New) and the elicitation form a server asks the person
// to fill in (NewElicitation). Both are pure models: Update turns key presses
// into an Action value (Submit, Accept, Decline, Cancel) and the root model
// acts on it.
//
// Fields are generated for strings, numbers, integers, booleans and enums;
// arrays, objects and anything the form cannot express get a JSON editor,
// and the whole form can switch to raw JSON. Input is validated against the
// schema with jsonschema-go before it is returned, and errors are shown at
// the field they concern.
//
// The package must never fetch anything: a schema's external $ref fails with
// a clear error instead of being loaded, and schemas are bounded in size,
// depth and $ref loops before jsonschema-go sees them, because a $ref loop
// that consumes no input would otherwise recurse until the process dies.
// Every string a server controls (names, descriptions, defaults, enum values,
// messages, URLs, schema text inside errors) is escaped with safetext before
// it is rendered, and only strings that need no escaping are ever put into a
// text input, since the inputs render their value as is.
package form

import "encoding/json"

// Action is what a form decided. A nil Action means the person is still
// filling it in. The call form returns Submit or Cancel; the elicitation form
// returns Accept, Decline or Cancel.
type Action interface {
	action()
}

// Submit carries a call's arguments: compact JSON of the fields the person
// filled or that kept their defaults, in the schema's property order, already
// validated against the schema. Numbers are JSON numbers exactly as typed.
type Submit struct {
	Args json.RawMessage
}

// Cancel closes the form without an answer. For an elicitation it is the
// "cancel" action: the person dismissed the request without choosing.
type Cancel struct{}

// Accept answers an elicitation with the person's content, validated against
// the requested schema. Numbers are float64, as the go-sdk validates them.
// Content is empty (not nil) for a URL elicitation or an empty schema.
type Accept struct {
	Content map[string]any
}

// Decline answers an elicitation with an explicit no.
type Decline struct{}

func (Submit) action()  {}
func (Cancel) action()  {}
func (Accept) action()  {}
func (Decline) action() {}
