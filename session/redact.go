package session

import (
	"encoding/json"

	"github.com/airlock-mcp/airlock/internal/secrets"
)

// Redact returns args with secrets replaced, at any depth, for the audit log
// (secrets.Redact under the audit policy: a secret key's value and any secret-shaped
// string become "[redacted sha256:HEX]"; invalid JSON is replaced whole).
func Redact(args json.RawMessage) json.RawMessage { return secrets.Redact(args) }
