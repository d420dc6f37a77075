package approval

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

// A clear that waits for another airlock's lock and then cannot be written (here
// the lock file is left shared, mode 0644; any error of the write takes the same
// path) still keeps the taint marked while it waited: that taint counts, with the
// context cleared elsewhere meanwhile or not, and nothing of it is left behind for
// a later clear.
func TestClearWaiting_FailedWriteKeepsTaintMeanwhile(t *testing.T) {
	for _, elsewhere := range []bool{true, false} {
		t.Run(fmt.Sprintf("clearedElsewhere=%v", elsewhere), func(t *testing.T) {
			dir := t.TempDir()
			e := newEngine(nil, nil, time.Minute, time.Now)
			e.store = openTaintStore(dir)
			old := trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch_url"}, At: time.Now().Add(-time.Minute), Channel: trust.ChannelResult, CallID: "old"}
			e.MarkTainted("agent", old)
			lockPath := filepath.Join(dir, TaintFile) + ".lock"
			held, err := statefile.OpenLock(lockPath)
			if err != nil {
				t.Fatal(err)
			}
			defer held.Close()
			if err := statefile.Lock(held); err != nil {
				t.Fatal(err)
			}
			ended := make(chan error, 1)
			shown := e.Taint("agent")
			go func() { ended <- e.ClearTaintShown("agent", shown) }()
			waitFlockWaiter(t, lockPath)
			fresh := trust.Taint{By: trust.Ref{Server: "mail", Tool: "read"}, At: time.Now(), Channel: trust.ChannelResult, CallID: "fresh"}
			e.MarkTainted("agent", fresh) // old still counts: kept aside only
			if elsewhere {
				if err := os.WriteFile(filepath.Join(dir, TaintFile), []byte(`{"version":1,"contexts":{}}`+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(lockPath, 0o644); err != nil { // the retry's updateIf fails
				t.Fatal(err)
			}
			statefile.Unlock(held)
			err = <-ended
			t.Logf("clear: %v", err)
			if err == nil {
				t.Fatal("clear succeeded; the test wants it to fail")
			}
			e.mu.Lock()
			since, clearing := len(e.sinceClear), len(e.clearing)
			e.mu.Unlock()
			got := e.Taint("agent")
			t.Logf("after the failed clear: taint %+v; len(sinceClear)=%d len(clearing)=%d", got, since, clearing)
			if !got.Tainted() {
				t.Errorf("the context is clean: the taint marked while the clear waited (%s) was never shown nor cleared, yet does not count", fresh.Reason())
			}
			if since != 0 {
				t.Errorf("sinceClear leaks %d entr(y/ies) after the last waiting clear ended", since)
			}
		})
	}
}
