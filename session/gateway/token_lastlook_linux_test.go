package gateway_test

// A call nobody is asked about is looked at once more after its decision is on disk:
// a revoke or a rotation that returned while the call was being decided stops it,
// even though no question stood between its first checks and the upstream.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

func TestAgentIdentity_UnaskedCallRevokedWhileDecidedNotForwarded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		named bool // a named token revoked, else the default token rotated
	}{{"named token revoked", true}, {"default token rotated", false}} {
		t.Run(tc.name, func(t *testing.T) {
			docs := sessiontest.NewUpstream("docs")
			docs.Add("get", "Read a doc.", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: sessiontest.Hint(false)})
			log, path := sessiontest.OpenAuditLog(t)
			m := sessiontest.StartUpstreams(t, sessiontest.NewConfig(sessiontest.Inproc("docs", trust.Trusted)), session.Options{Audit: log}, map[string]*sessiontest.Upstream{"docs": docs})
			dir := t.TempDir()
			def, err := gateway.LoadOrCreateToken(dir)
			if err != nil {
				t.Fatal(err)
			}
			g, err := gateway.New(m, gateway.Options{Listen: "127.0.0.1:0", Token: def, TokenFile: gateway.TokenPath(dir), TokensFile: gateway.TokensPath(dir)})
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { g.Close() })
			tok, ctxName := def, gateway.AgentContext(gateway.DefaultTokenName)
			if tc.named {
				if tok, err = gateway.AddToken(dir, "ci-bot", time.Now()); err != nil {
					t.Fatal(err)
				}
				ctxName = gateway.AgentContext("ci-bot")
			}
			a := mustAgentWithToken(t, g, tok, "claude-code")
			if res := callTool(t, a, "docs__get"); res.IsError {
				t.Fatalf("the first call: %s", resultText(res))
			}
			waitHeadSynced(t, path) // the first call's records are all on disk: nothing else writes

			// Holding the audit log's lock, as another airlock appending would, keeps
			// the next call between its decision and its record.
			held, err := statefile.OpenLock(path + ".lock")
			if err != nil {
				t.Fatal(err)
			}
			defer held.Close()
			if err := statefile.Lock(held); err != nil {
				t.Fatal(err)
			}
			done := make(chan *mcp.CallToolResult, 1)
			go func() {
				res, err := a.CallTool(context.Background(), &mcp.CallToolParams{Name: "docs__get", Arguments: map[string]any{"x": "y"}})
				if err != nil {
					res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
				}
				done <- res
			}()
			waitLockWaiter(t, path+".lock")
			if tc.named {
				err = gateway.RevokeToken(dir, "ci-bot")
			} else {
				_, err = gateway.RotateToken(dir)
			}
			if err != nil {
				t.Fatal(err)
			}
			// The revoke has returned; the record is written now, and then the call
			// would be forwarded.
			if err := statefile.Unlock(held); err != nil {
				t.Fatal(err)
			}
			res := <-done
			if n := len(docs.Calls("get")); n != 1 {
				t.Errorf("get ran %d times, want only the first call's", n)
			}
			if !res.IsError {
				t.Errorf("the agent got a result for a call whose token was revoked while it was decided: %s", resultText(res))
			}
			var decision, outcome string
			for _, r := range sessiontest.AuditRecords(t, path) {
				if r.Context != ctxName || r.Tool != "get" {
					continue
				}
				switch r.Kind {
				case "decision":
					decision = r.Decision
				case "outcome":
					outcome = r.Outcome + ": " + r.Error
				}
			}
			if decision != "allow" || !strings.Contains(outcome, "after the call was allowed, so it was not forwarded") {
				t.Errorf("the second call's records: decision %q, outcome %q; want allow, then withdrawn after it", decision, outcome)
			}
		})
	}
}

// waitHeadSynced waits until the audit log at path names its last record as synced
// in its head file (the delayed sync has run).
func waitHeadSynced(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		recs := sessiontest.AuditRecords(t, path)
		b, err := os.ReadFile(path + ".head")
		if err == nil && len(recs) > 0 && strings.Contains(string(b), fmt.Sprintf(`"seq":%d,`, recs[len(recs)-1].Seq)) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the audit log's head never named its last record")
}

// waitLockWaiter waits until some process waits for the flock of the file at path
// (/proc/locks lists a blocked request on its inode with "->").
func waitLockWaiter(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ino := fmt.Sprintf(":%d ", fi.Sys().(*syscall.Stat_t).Ino)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/locks")
		if err != nil {
			t.Skip("no /proc/locks:", err)
		}
		for line := range strings.Lines(string(b)) {
			if strings.Contains(line, "->") && strings.Contains(line, "FLOCK") && strings.Contains(line, ino) {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the call never waited for the audit log's lock")
}
