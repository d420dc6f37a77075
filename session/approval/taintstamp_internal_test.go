package approval

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

// taint.json written over in place (the same inode and size) with its old
// modification time put back, as a restore from a backup leaves it, is read again:
// the taint it holds counts at once, settled file or not. Before, the engine kept
// the taints it had read while the file's identity, size, mode and modification
// time were the same.
func TestTaint_RewriteKeepingItsTimesIsRead(t *testing.T) {
	for _, settled := range []bool{false, true} {
		t.Run(map[bool]string{false: "just written", true: "settled"}[settled], func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			e := newEngine(nil, nil, time.Minute, time.Now)
			e.store = openTaintStore(dir)
			doc := func(ctx string) []byte {
				cause := trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch_url"}, At: time.Unix(100, 0).UTC(), Channel: trust.ChannelResult}
				b, err := json.Marshal(taintDoc{Version: 1, Contexts: map[string]trust.Taint{ctx: cause}})
				if err != nil {
					t.Fatal(err)
				}
				return append(b, '\n')
			}
			path := e.store.path
			if err := os.WriteFile(path, doc("agent:aaaa"), 0o600); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-time.Hour).Truncate(time.Second)
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
			if !e.Taint("agent:aaaa").Tainted() || e.Taint("agent:bbbb").Tainted() {
				t.Fatal("premise: the file's taint is not the engine's")
			}
			if settled {
				time.Sleep(statefile.Settle + 200*time.Millisecond)
				if e.Taint("agent:bbbb").Tainted() {
					t.Fatal("settled: a context the file does not hold is tainted")
				}
			}
			fh, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fh.Write(doc("agent:bbbb")); err != nil {
				t.Fatal(err)
			}
			fh.Close()
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
			if !e.Taint("agent:bbbb").Tainted() {
				t.Fatal("the context the rewritten file taints is not tainted: the engine kept what it had read")
			}
		})
	}
}
