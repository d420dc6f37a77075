package form

import (
	"encoding/json"

	"github.com/airlock-mcp/airlock/session/argcheck"
)

// Bounds on what the form accepts from a server or a person (argcheck's, and the
// form's own MaxFields).
const (
	// MaxSchemaBytes is the largest input schema the form validates with.
	MaxSchemaBytes = argcheck.MaxSchemaBytes
	// MaxSchemaDepth is the deepest nesting of objects and arrays in a schema.
	MaxSchemaDepth = argcheck.MaxSchemaDepth
	// MaxArgsDepth is the deepest nesting of objects and arrays in arguments.
	MaxArgsDepth = argcheck.MaxArgsDepth
	// MaxFields is the most properties the form lays out as fields; a schema
	// with more is edited as raw JSON.
	MaxFields = 200
)

// ErrExternalRef is wrapped by the error of a schema with a $ref outside the
// schema itself: airlock never fetches schemas, from the network or disk.
var ErrExternalRef = argcheck.ErrExternalRef

// schema is what the form knows about a requested or input schema: the one
// validator every call passes (session/argcheck).
type schema = argcheck.Schema

func loadSchema(raw json.RawMessage) schema { return argcheck.Load(raw) }

func checkDepth(b []byte, limit int) error { return argcheck.CheckDepth(b, limit) }

func propertyOrder(raw []byte, props map[string]any) []string {
	return argcheck.PropertyOrder(raw, props)
}

func deref(root, m map[string]any) map[string]any { return argcheck.Deref(root, m) }

func fieldError(err error, fields []string) (name, msg string) {
	return argcheck.FieldError(err, fields)
}

// CheckArgs validates call arguments against a tool's input schema exactly as the
// call form does (argcheck.CheckArgs), for `airlock call`.
func CheckArgs(inputSchema, args json.RawMessage) error {
	return argcheck.CheckArgs(inputSchema, args)
}
