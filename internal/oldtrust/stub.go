// Package oldtrust is the scanners as they were before the lexer, kept only while
// the fuzz tests compare them with the new front ends.
package oldtrust

import "github.com/airlock-mcp/airlock/trust"

type (
	Declared = trust.Declared
	Hints    = trust.Hints
)
