package approval

import (
	"os"
	"testing"
)

// TestMain runs the tests, unless the test binary was started as the second airlock
// process of a test (envRatesProcess names its state dir): then it plays that.
func TestMain(m *testing.M) {
	if dir := os.Getenv(envRatesProcess); dir != "" {
		os.Exit(ratesProcess(dir))
	}
	os.Exit(m.Run())
}
