package gateway_test

import (
	"testing"

	"github.com/airlock-mcp/airlock/internal/sessiontest"
)

// The test binary doubles as the stdio servers the tests start (sessiontest.Main).
func TestMain(m *testing.M) { sessiontest.Main(m, nil) }
