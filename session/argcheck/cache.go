package argcheck

import (
	"encoding/json"
	"sync"
)

// Bounds on the compiled input schemas kept for checking calls: how many, and how
// many schema bytes in all (a hostile listing of large distinct schemas must not
// double its memory here). Past either the cache starts again, and a schema is
// compiled once more when next called.
const (
	maxArgSchemas     = 4096
	maxArgSchemaBytes = 32 << 20
)

// Cache keeps each input schema compiled once for checking calls, keyed by its
// exact bytes: a schema that changes is a new key, never a stale check. The zero
// Cache is ready to use and safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	by    map[string]*Schema
	bytes int
}

// Check validates a call's canonical arguments against the tool's input schema
// with the validator the call form and `airlock call` use: the Manager passes
// every call through it before the call is decided, so no rule, grant or question
// sees arguments the schema does not allow. Empty args are the empty object. The
// error names the field.
func (c *Cache) Check(inputSchema json.RawMessage, args []byte) error {
	c.mu.Lock()
	s := c.by[string(inputSchema)]
	c.mu.Unlock()
	if s == nil {
		loaded := Load(inputSchema)
		s = &loaded
		c.mu.Lock()
		if c.by == nil || len(c.by) >= maxArgSchemas || c.bytes+len(inputSchema) > maxArgSchemaBytes {
			c.by, c.bytes = map[string]*Schema{}, 0
		}
		c.by[string(inputSchema)] = s
		c.bytes += len(inputSchema)
		c.mu.Unlock()
	}
	if len(args) == 0 {
		args = []byte("{}")
	}
	return s.Check(args)
}
