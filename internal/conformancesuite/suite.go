// Package conformancesuite finds the MCP conformance suite and the Node 22 it runs
// on, both pinned in testdata/conformance and installed there by .ci/run. It is test
// support: the tests that run the suite, server side and client side, share it.
package conformancesuite

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Locate returns the node binary and the suite's entry script. Without them the test
// is skipped on a developer's machine and fails in CI, where they must be present.
func Locate(t testing.TB) (node, script string) {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(self), "..", "..", "testdata", "conformance", "node_modules")
	node = filepath.Join(dir, ".bin", "node")
	script = filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, p := range []string{node, script} {
		if _, err := os.Stat(p); err != nil {
			msg := "the MCP conformance suite is not installed: run (cd testdata/conformance && npm ci)"
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return node, script
}
