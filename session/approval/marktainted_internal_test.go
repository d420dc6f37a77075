package approval

import (
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/trust"
)

// TestMarkTainted_AnEmptyTaintChangesNothing: MarkTainted is exported for the gateway
// (session/gateway), so a caller could hand it a taint that names no cause. Such a
// taint is not recorded, and merging one never replaces a context's taint: with a
// state dir, an empty taint (the zero time, "earlier" than any cause) used to
// overwrite the taint another airlock process wrote meanwhile.
func TestMarkTainted_AnEmptyTaintChangesNothing(t *testing.T) {
	cause := trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch_url"}, At: time.Unix(100, 0), Channel: trust.ChannelResult}

	m := map[string]trust.Taint{"agent": cause}
	if mergeTaint(m, "agent", trust.Taint{}) || !m["agent"].Tainted() {
		t.Fatalf("merging an empty taint replaced the context's: %+v", m["agent"])
	}
	if mergeTaint(m, "other", trust.Taint{}) || len(m) != 1 {
		t.Fatalf("merging an empty taint added an entry: %+v", m)
	}
	if !mergeTaint(m, "agent", trust.Taint{By: cause.By, At: cause.At.Add(-time.Second), Channel: trust.ChannelResult}) {
		t.Error("an earlier cause no longer replaces a later one (the first cause is kept)")
	}

	for _, dir := range []string{"", t.TempDir()} {
		e := newEngine(nil, nil, time.Minute, time.Now)
		if dir != "" {
			e.store = openTaintStore(dir)
		}
		e.MarkTainted("agent", trust.Taint{})
		if got := e.Taints(); len(got) != 0 {
			t.Errorf("state dir %q: an empty taint was recorded: %+v", dir, got)
		}
		e.MarkTainted("agent", cause)
		if !e.Taint("agent").Tainted() {
			t.Errorf("state dir %q: a real taint was not recorded", dir)
		}
	}
}
