package session

import (
	"encoding/json"
	"sync"

	"github.com/airlock-mcp/airlock/session/argcheck"
)

// maxArgSchemas bounds the compiled input schemas kept for checking calls; past it
// the cache starts again (a listing of more distinct schemas recompiles some).
const maxArgSchemas = 4096

// argSchemas keeps each input schema compiled once for checking calls, keyed by its
// exact bytes: a schema that changes is a new key, never a stale check.
type argSchemas struct {
	mu sync.Mutex
	by map[string]*argcheck.Schema
}

// check validates a call's canonical arguments against the tool's input schema
// with the validator the call form and `airlock call` use (argcheck): every call
// passes it before it is decided, so no rule, grant or question sees arguments the
// schema does not allow. The error names the field.
func (c *argSchemas) check(inputSchema json.RawMessage, args []byte) error {
	key := string(inputSchema)
	c.mu.Lock()
	s := c.by[key]
	c.mu.Unlock()
	if s == nil {
		loaded := argcheck.Load(inputSchema)
		s = &loaded
		c.mu.Lock()
		if c.by == nil || len(c.by) >= maxArgSchemas {
			c.by = map[string]*argcheck.Schema{}
		}
		c.by[key] = s
		c.mu.Unlock()
	}
	if len(args) == 0 {
		args = []byte("{}")
	}
	return s.Check(args)
}
