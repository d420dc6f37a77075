package argcheck

import (
	"encoding/json"
	"sync"
)

// Bounds on the compiled schemas kept for checking calls and their results: how
// many, and how many schema bytes in all (a hostile listing of large distinct
// schemas must not double its memory here). Past either the cache starts again, and
// a schema is compiled once more when next used.
const (
	maxArgSchemas     = 4096
	maxArgSchemaBytes = 32 << 20
)

// Cache keeps each input and output schema compiled once for checking calls and
// their results, keyed by its exact bytes: a schema that changes is a new key, never
// a stale check. The zero Cache is ready to use and safe for concurrent use.
type Cache struct {
	mu sync.Mutex
	// in and out are the input and output schemas, by their bytes (two maps, so
	// a lookup by the bytes as given copies nothing).
	in, out map[string]*Schema
	bytes   int
}

// Check validates a call's canonical arguments against the tool's input schema
// with the validator the call form and `airlock call` use: the Manager passes
// every call through it before the call is decided, so no rule, grant or question
// sees arguments the schema does not allow. Empty args are the empty object. The
// error names the field.
func (c *Cache) Check(inputSchema json.RawMessage, args []byte) error {
	if len(args) == 0 {
		args = []byte("{}")
	}
	return c.schema(inputSchema, false).Check(args)
}

// CheckResult validates a result's structured content against the tool's output
// schema (LoadOutput, Schema.CheckResult): the Manager passes every result of a
// tool that declares one through it before anyone is given the result.
func (c *Cache) CheckResult(outputSchema json.RawMessage, structured any) error {
	return c.schema(outputSchema, true).CheckResult(structured)
}

// schema is raw compiled as an input (Load) or output (LoadOutput) schema, from
// the cache when it was compiled before.
func (c *Cache) schema(raw json.RawMessage, output bool) *Schema {
	c.mu.Lock()
	m := c.in
	if output {
		m = c.out
	}
	s := m[string(raw)]
	c.mu.Unlock()
	if s != nil {
		return s
	}
	var loaded Schema
	if output {
		loaded = LoadOutput(raw)
	} else {
		loaded = Load(raw)
	}
	s = &loaded
	c.mu.Lock()
	if c.in == nil || len(c.in)+len(c.out) >= maxArgSchemas || c.bytes+len(raw) > maxArgSchemaBytes {
		c.in, c.out, c.bytes = map[string]*Schema{}, map[string]*Schema{}, 0
	}
	if output {
		c.out[string(raw)] = s
	} else {
		c.in[string(raw)] = s
	}
	c.bytes += len(raw)
	c.mu.Unlock()
	return s
}
