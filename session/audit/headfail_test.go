package audit_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session/audit"
)

// A head file that cannot be written (a full disk) is a notice, not silence: the
// log's Problem says so (the TUI's status and `airlock call` show it), the log is
// still appended to, and the next commit writes the head again.
func TestLog_AFailedHeadWriteIsANoticeAndRetried(t *testing.T) {
	a, path := openTemp(t)
	changed := make(chan struct{}, 10)
	a.OnProblem(func() { changed <- struct{}{} })
	audit.FailHeadWrites(errors.New("no space left on device"))
	defer audit.FailHeadWrites(nil)
	if err := a.AppendUnsynced(rec(1)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no problem was told after the head write failed")
	}
	p := a.Problem()
	if p == nil || !strings.Contains(p.Error(), "head") || !strings.Contains(p.Error(), "no space left on device") || a.Damaged() {
		t.Fatalf("after a failed head write: problem %v, damaged %v", p, a.Damaged())
	}
	if err := a.Append(rec(2)); err != nil {
		t.Fatalf("an append after a failed head write: %v", err)
	}
	if !strings.Contains(a.Problem().Error(), "head") {
		t.Errorf("the head still fails, but the notice went: %v", a.Problem())
	}
	audit.FailHeadWrites(nil)
	if err := a.Append(rec(3)); err != nil {
		t.Fatal(err)
	}
	if p := a.Problem(); p != nil {
		t.Errorf("the next synced commit wrote the head, but the notice stays: %v", p)
	}
	b, err := os.ReadFile(path + ".head")
	if err != nil || !strings.Contains(string(b), `"seq":3`) {
		t.Errorf("the head after the retry: %s %v", b, err)
	}
}
