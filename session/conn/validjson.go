package conn

import "github.com/airlock-mcp/airlock/internal/jsonlex"

// validJSON reports exactly what encoding/json's Valid reports for b: one JSON value
// with optional whitespace around it, strings without control bytes and with only
// JSON's escapes (other bytes, valid UTF-8 or not, are accepted, as Valid accepts
// them), and at most jsonlex.MaxNesting objects and arrays open at once. It walks
// the bytes once (jsonlex.Skip), a string's plain bytes by a table, where Valid
// steps a state machine through a function call per byte: pageReader checks every
// page of a stdio listing with it before splitting the page (a page of 1,000 tools
// took Valid 0.65 ms). TestValidJSON_SameAsEncodingJSON and FuzzValidJSON hold it
// to Valid.
func validJSON(b []byte) bool {
	end, e := jsonlex.Skip(b, jsonlex.Space(b, 0), jsonlex.MaxNesting)
	return e == jsonlex.OK && jsonlex.Space(b, end) == len(b)
}
