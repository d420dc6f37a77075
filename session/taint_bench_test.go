package session_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/trust"
)

// BenchmarkTaint_NewContextAt2900 is the cost of tainting one new context when
// taint.json already holds 2,900 (a gateway that served many agents): one
// read-merge-write of the file under its lock.
func BenchmarkTaint_NewContextAt2900(b *testing.B) {
	dir := b.TempDir()
	at := time.Now().UTC()
	doc := map[string]any{"version": 1, "contexts": map[string]trust.Taint{}}
	for i := range 2900 {
		doc["contexts"].(map[string]trust.Taint)[fmt.Sprintf("agent-claude-code-%08x", i)] = trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch_url"}, CallID: fmt.Sprintf("c-%d", i), At: at}
	}
	js, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, approval.TaintFile), js, 0o600); err != nil {
		b.Fatal(err)
	}
	e := session.NewTaintEngine(dir)
	i := 0
	for b.Loop() {
		e.TaintContext(fmt.Sprintf("agent-new-%08x", i), trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch_url"}, CallID: "c-x", At: at})
		i++
	}
}
