package session_test

import (
	"context"
	"testing"

	"github.com/airlock-mcp/airlock/internal/sessiontest"
)

// The test binary doubles as every stdio server the tests need (sessiontest.Main);
// the modes below are this package's own, the rest are sessiontest.Serve's.
func TestMain(m *testing.M) { sessiontest.Main(m, serveLocal) }

// serveLocal plays the servers that need this package's test hooks.
func serveLocal(mode string) (int, bool) {
	switch mode {
	case "prober":
		return serveProber(context.Background()), true
	case "audit-append", "pins-accept", "callid", "taint-write":
		return serveStateChild(mode), true
	}
	return 0, false
}
