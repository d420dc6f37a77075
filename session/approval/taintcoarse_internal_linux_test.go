package approval

import (
	"slices"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/fulldisk"
	"github.com/airlock-mcp/airlock/trust"
)

// Two airlock processes share taint.json on a file system whose times are whole
// seconds. A taints agent:aaaa; B then, under the lock, taints agent:bbbb and the
// person clears agent:aaaa, all within one second: B's second file is given the
// inode number A's file freed, its size and its times. A's next decision must still
// count B's taint, and A's next write must not erase it. A stamp that vouched for
// a process's own write at once took B's file for A's (it does now only while A
// holds its file open, so that no other file can be given its number).
func TestTaint_AnotherProcessWriteWithinASecondIsRead(t *testing.T) {
	dir := fulldisk.MountCoarse(t)
	cause := trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch_url"}, At: time.Now().UTC().Truncate(time.Second), Channel: trust.ChannelResult}
	for round := range 20 { // each round within one second, so most share their times
		a := newEngine(nil, nil, time.Minute, time.Now)
		a.store = openTaintStore(dir)
		b := openTaintStore(dir) // another process: its own stamp and lock
		a.mu.Lock()
		a.addTaintLocked("agent:aaaa", cause)
		a.mu.Unlock()
		if _, err := b.update(func(d *taintDoc) bool { d.Contexts["agent:bbbb"] = cause; return true }); err != nil {
			t.Fatal(err)
		}
		if _, err := b.update(func(d *taintDoc) bool { delete(d.Contexts, "agent:aaaa"); return true }); err != nil {
			t.Fatal(err)
		}
		if !a.Taint("agent:bbbb").Tainted() {
			t.Fatalf("round %d: the taint another airlock process wrote does not count here", round)
		}
		a.mu.Lock()
		a.addTaintLocked("agent:cccc", cause)
		a.mu.Unlock()
		got, _, err := openTaintStore(dir).load(true)
		if err != nil {
			t.Fatal(err)
		}
		var held []string
		for k := range got {
			held = append(held, k)
		}
		slices.Sort(held)
		if want := []string{"agent:bbbb", "agent:cccc"}; !slices.Equal(held, want) {
			t.Fatalf("round %d: taint.json holds %v after this process's next write, want %v", round, held, want)
		}
		if _, err := b.update(func(d *taintDoc) bool { clear(d.Contexts); return true }); err != nil {
			t.Fatal(err)
		}
	}
}
