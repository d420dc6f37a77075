package pins

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/fulldisk"
	"github.com/airlock-mcp/airlock/trust"
)

// Two airlock processes share pins.json on a file system whose times are whole
// seconds. A pins a tool; within the same second B accepts two other definitions of
// it under the lock, each the same length, so B's second file is given the inode
// number A's file freed, its size and its times. A's next listing of the first
// definition must compare against the one the person accepted in B (changed), and
// not against the pin A wrote, which a stamp vouching for A's own write at once took
// the file for.
func TestPins_AnotherProcessWriteWithinASecondIsRead(t *testing.T) {
	dir := fulldisk.MountCoarse(t)
	now := time.Unix(1, 0)
	for round := range 20 {
		path := filepath.Join(dir, "pins.json")
		a, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.observe("id-s", "s", "", listedSend(t, "one"), now); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"two", "six"} {
			if err := b.Accept("id-s", "s", nil, map[string]json.RawMessage{"send": listedSend(t, d)[0].Raw}, now); err != nil {
				t.Fatal(err)
			}
		}
		out, err := a.observe("id-s", "s", "", listedSend(t, "one"), now)
		if err != nil {
			t.Fatal(err)
		}
		if got := out.tools["send"].State; got != trust.PinChanged {
			t.Fatalf("round %d: the definition A pinned, after B accepted another, is %v here, want changed", round, got)
		}
		a.setStamp(a.stamp, nil)
		b.setStamp(b.stamp, nil)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}
