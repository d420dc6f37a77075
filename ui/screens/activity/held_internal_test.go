package activity

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/ui/theme"
)

func bigCall(i, size int) model.CallFinished {
	args := append([]byte(`{"body":"`), bytes.Repeat([]byte{'a' + byte(i%26)}, size)...)
	return model.CallFinished{
		CallID: "c", Server: "files", Tool: "write", Tier: "write", Decision: "allow", Outcome: "ok", At: time.Now(),
		Args:   json.RawMessage(append(args, `"}`...)),
		Result: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wrote it"}}},
	}
}

// A thousand calls of 1 MiB arguments held 1 GiB in the activity list, which only
// let go of results: now the entries hold at most activityHeld of arguments and
// results (and the newest call always keeps its own), measured on the heap.
func TestLog_ManyLargeCallsHoldBoundedMemory(t *testing.T) {
	const calls, size = maxActivity, 1 << 20
	before := heapInUse()
	var a Log
	for i := range calls {
		a.Add(Entry{At: time.Now(), Call: bigCall(i, size)})
	}
	grew := heapInUse() - before
	t.Logf("%d calls of 1 MiB arguments: %d MiB of heap, %d MiB counted held", calls, grew>>20, a.held>>20)
	if grew > 2*activityHeld {
		t.Errorf("%d calls of 1 MiB arguments hold %d MiB of heap, want at most %d MiB", calls, grew>>20, 2*activityHeld>>20)
	}
	if a.held > activityHeld {
		t.Errorf("the list counts %d bytes held, over its bound %d", a.held, activityHeld)
	}
	if n := len(a.newest(0).Call.Args); n <= size {
		t.Errorf("the newest call keeps %d bytes of its arguments, want all %d", n, size)
	}
	runtime.KeepAlive(&a)
}

// The full record of a call whose arguments and result were let go says so, and
// does not call an ok call failed or show its arguments as empty; the newest call's
// record shows them.
func TestLog_RecordOfALetGoCallSaysSo(t *testing.T) {
	st := theme.New(true, true)
	var a Log
	for i := range 80 {
		a.Add(Entry{At: time.Now(), Call: bigCall(i, 1<<20)})
	}
	const width = 40
	record := ansi.Strip(a.newest(79).RecordContent(&st, width))
	for _, line := range strings.Split(record, "\n") {
		if ansi.StringWidth(line) > width {
			t.Errorf("a line of the record is wider than %d cells: %q", width, line)
		}
	}
	old := strings.Join(strings.Fields(record), " ")
	for _, want := range []string{"✓ ok", "result is no longer kept in memory (airlock keeps the newest calls' only)", "no longer kept in memory; the audit log has them"} {
		if !strings.Contains(old, want) {
			t.Errorf("the oldest call's record lacks %q:\n%.600s", want, old)
		}
	}
	for _, never := range []string{"FAILED", "{}"} {
		if strings.Contains(old, never) {
			t.Errorf("the oldest call's record says %q:\n%.600s", never, old)
		}
	}
	newest := ansi.Strip(a.newest(0).RecordContent(&st, 100))
	if !strings.Contains(newest, "wrote it") || !strings.Contains(newest, `"body"`) || strings.Contains(newest, "no longer kept") {
		t.Errorf("the newest call's record does not show its arguments and result:\n%.600s", newest)
	}
}

// An event the session queue did not keep the payload of is filed as let go.
func TestLog_UnkeptEventIsFiledAsLetGo(t *testing.T) {
	st := theme.New(true, true)
	var a Log
	c := bigCall(0, 10)
	c.Args, c.Result, c.Unkept = nil, nil, true
	a.Add(Entry{At: time.Now(), Call: c})
	got := strings.Join(strings.Fields(ansi.Strip(a.newest(0).RecordContent(&st, 100))), " ")
	if !strings.Contains(got, "no longer kept in memory; the audit log has them") || strings.Contains(got, "FAILED") {
		t.Errorf("the record of an unkept call:\n%s", got)
	}
}

// heapInUse is the heap in use after a collection.
func heapInUse() int {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int(ms.HeapInuse)
}

// A record says a call's time includes waiting for a person only when a person was
// asked: a call nobody was asked about can wait too (for the audit log of another
// airlock), and the record does not invent a question.
func TestRecord_WaitingForAPersonOnlyWhenAsked(t *testing.T) {
	st := theme.New(true, true)
	for by, want := range map[string]bool{"person": true, "taint-asked-then-person": true, "timeout": true, "policy": false, "rule": false, "grant": false, "pin": false} {
		var a Log
		c := bigCall(0, 10)
		c.DecidedBy, c.Duration = by, 3*time.Second
		a.Add(Entry{At: time.Now(), Call: c})
		got := strings.Join(strings.Fields(ansi.Strip(a.newest(0).RecordContent(&st, 100))), " ")
		if !strings.Contains(got, "took 3s in all") || strings.Contains(got, "waiting for a person included") != want {
			t.Errorf("decided by %s: %q; want the person's wait said: %v", by, got[:min(len(got), 200)], want)
		}
	}
}
