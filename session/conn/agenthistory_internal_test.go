package conn

import (
	"strings"
	"testing"
	"time"
)

// The agent sessions kept are bounded: running ones beyond AgentHistoriesLive and
// ended ones beyond AgentHistoriesEnded are let go, the newest kept.
func TestAgentHistoriesBounds(t *testing.T) {
	a := NewAgentHistories(nil)
	for i := range AgentHistoriesLive + AgentHistoriesEnded + 5 {
		a.Open("s"+string(rune('A'+i)), "agent", "token:default")
	}
	srcs := a.Sources()
	if len(srcs) != AgentHistoriesLive+AgentHistoriesEnded {
		t.Fatalf("%d sessions kept, want %d", len(srcs), AgentHistoriesLive+AgentHistoriesEnded)
	}
	if !srcs[0].Ended || srcs[len(srcs)-1].Ended {
		t.Errorf("ended first, running last: %+v … %+v", srcs[0], srcs[len(srcs)-1])
	}
	a.EndAbsent(map[string]bool{}, time.Hour)
	if n := len(a.Sources()); n != AgentHistoriesLive+AgentHistoriesEnded {
		t.Errorf("a session within its grace was ended: %d kept", n)
	}
	a.EndAbsent(map[string]bool{}, 0)
	if srcs := a.Sources(); len(srcs) != AgentHistoriesEnded || !srcs[0].Ended {
		t.Errorf("after every session left: %d kept", len(srcs))
	}
}

// A tap keeps each event of an event stream as written, in any pieces, and a JSON
// body at its close.
func TestTapSplitsEvents(t *testing.T) {
	h := NewHistory(nil)
	tap := h.NewTap("text/event-stream")
	stream := "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n"
	for i := 0; i < len(stream); i += 7 {
		tap.Write([]byte(stream[i:min(i+7, len(stream))]))
	}
	tap.Close()
	jt := h.NewTap("application/json")
	jt.Write([]byte(`{"jsonrpc":"2.0","id":4,`))
	jt.Write([]byte(`"result":{}}`))
	jt.Close()
	s := h.Snapshot()
	var got []string
	for _, e := range s.Messages {
		got = append(got, e.Kind+" "+e.Method+e.ID)
	}
	if strings.Join(got, ",") != "notification notifications/progress,response 3,response 4" {
		t.Errorf("kept %q", got)
	}
}

var benchCall = []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"docs__get_doc","arguments":{"id":"tiers"}}}`)
var benchAnswer = []byte("event: message\nid: 12_0\ndata: {\"jsonrpc\":\"2.0\",\"id\":12,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a tier is how much a tool can do\"}]}}\n\n")

// BenchmarkAgentHistoryCall is what the gateway's history costs one agent call: its
// request kept as read and its answer's event through a tap (two messages).
func BenchmarkAgentHistoryCall(b *testing.B) {
	a := NewAgentHistories(nil)
	h := a.Open("s", "bench", "token:default")
	b.ReportAllocs()
	for b.Loop() {
		h.Add(false, benchCall)
		tap := h.NewTap("text/event-stream")
		tap.Write(benchAnswer)
		tap.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/msg")
}
