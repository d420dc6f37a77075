package approval

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/flocktest"
	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

// waitFlockWaiter waits until some open file waits for the flock on path.
func waitFlockWaiter(t *testing.T, path string) {
	t.Helper()
	if !flocktest.Waiter(t, path, 10*time.Second) {
		t.Fatal("nothing waited for the lock")
	}
}

// A context tainted while the person's clear of its earlier taint waits for
// another airlock's lock on taint.json stays tainted: the new taint came from a
// call after the person's answer, and nobody has seen it. MarkTainted runs during
// the wait and sees the old taint, which still counts; the clear keeps the new one,
// in memory and in the file, and so does a clear that fails because the other
// airlock cleared the context meanwhile.
func TestClearWaiting_TaintAddedMeanwhileKept(t *testing.T) {
	for _, c := range []struct{ shown, elsewhere bool }{{true, false}, {false, false}, {true, true}, {false, true}} {
		shown := c.shown
		t.Run(fmt.Sprintf("shown=%v clearedElsewhere=%v", shown, c.elsewhere), func(t *testing.T) {
			dir := t.TempDir()
			e := newEngine(nil, nil, time.Minute, time.Now)
			e.store = openTaintStore(dir)
			old := trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch_url"}, At: time.Now().Add(-time.Minute), Channel: trust.ChannelResult}
			e.MarkTainted("agent", old)
			if !e.Taint("agent").Tainted() {
				t.Fatal("not tainted")
			}
			lockPath := filepath.Join(dir, TaintFile) + ".lock"
			held, err := statefile.OpenLock(lockPath)
			if err != nil {
				t.Fatal(err)
			}
			defer held.Close()
			if err := statefile.Lock(held); err != nil { // another airlock writing taint.json
				t.Fatal(err)
			}
			ended := make(chan error, 1)
			go func() {
				if shown {
					ended <- e.ClearTaintShown("agent", e.Taint("agent"))
				} else {
					ended <- e.ClearTaint("agent")
				}
			}()
			waitFlockWaiter(t, lockPath)
			// The person's clear is pending; a call's result now taints the context anew.
			fresh := trust.Taint{By: trust.Ref{Server: "mail", Tool: "read"}, At: time.Now(), Channel: trust.ChannelResult, CallID: "fresh"}
			marked := make(chan struct{})
			go func() { e.MarkTainted("agent", fresh); close(marked) }()
			select {
			case <-marked:
			case <-time.After(300 * time.Millisecond):
				// old code: MarkTainted waits for the clear (engine lock held); fine
			}
			if c.elsewhere { // the other airlock clears the context while it holds the lock
				if err := os.WriteFile(filepath.Join(dir, TaintFile), []byte(`{"version":1,"contexts":{}}`+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			statefile.Unlock(held)
			if err := <-ended; (err != nil) != c.elsewhere {
				t.Fatalf("clear: %v", err)
			}
			<-marked
			b, _ := os.ReadFile(filepath.Join(dir, TaintFile))
			if got := e.Taint("agent"); !got.Tainted() || got.CallID != "fresh" {
				t.Fatalf("the taint added while the clear waited: context's taint %+v, want the fresh one; taint.json: %s", got, b)
			}
			if !strings.Contains(string(b), `"fresh"`) {
				t.Errorf("taint.json after the clear lacks the taint marked while it waited: %s", b)
			}
		})
	}
}
