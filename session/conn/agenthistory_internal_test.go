package conn

import (
	"bytes"
	"math/rand/v2"
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

// The split hands on the same events whatever pieces the stream arrives in: whole,
// a byte at a time, or cut anywhere; an event whose data passes MaxMessageBytes, or
// one with a line longer than that, is not handed on, and the next one is.
func TestSSESplit_SameEventsInAnyPieces(t *testing.T) {
	long := strings.Repeat("x", MaxMessageBytes)
	stream := "event: message\r\nid: 1\r\ndata: {\"a\":1}\r\n\r\n" +
		"data: first\ndata: second\n\n" +
		": a comment\n\n" +
		"data: " + long[:MaxMessageBytes-6] + "\n\n" + // exactly the bound
		"data: " + long + "\n\n" + // data over the bound
		long + long + "\ndata: {}\n\n" + // a line over the bound
		"data: last\n\n" +
		"data: cut off"
	want := []string{`{"a":1}`, "first\nsecond", long[:MaxMessageBytes-6], "last"}
	split := func(pieces func(n int) int) []string {
		var s sseSplit
		var got []string
		for i := 0; i < len(stream); {
			n := min(pieces(i), len(stream)-i)
			s.feed([]byte(stream[i:i+n]), func(data []byte) { got = append(got, string(data)) })
			i += n
		}
		return got
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for name, pieces := range map[string]func(int) int{
		"whole":   func(int) int { return len(stream) },
		"bytes":   func(int) int { return 1 },
		"7s":      func(int) int { return 7 },
		"random":  func(int) int { return 1 + rnd.IntN(3*MaxMessageBytes/2) },
		"at cuts": func(i int) int { return 1 + i%4093 },
	} {
		got := split(pieces)
		if len(got) != len(want) {
			t.Errorf("%s: %d events, want %d", name, len(got), len(want))
			continue
		}
		for k := range want {
			if got[k] != want[k] {
				t.Errorf("%s: event %d is %d bytes %.20q, want %d bytes %.20q", name, k, len(got[k]), got[k], len(want[k]), want[k])
			}
		}
	}
}

// BenchmarkSSESplit is the split's cost for one 4 KB answer's event.
func BenchmarkSSESplit(b *testing.B) {
	event := []byte("event: message\nid: 12_0\ndata: {\"jsonrpc\":\"2.0\",\"id\":12,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + strings.Repeat("MCP is a protocol. ", 200) + "\"}]}}\n\n")
	var s sseSplit
	b.SetBytes(int64(len(event)))
	b.ReportAllocs()
	for b.Loop() {
		s.feed(event, func([]byte) {})
	}
}

// An agent session's history keeps its own, smaller bounds, so that many sessions
// together stay within AgentHistoriesLive+AgentHistoriesEnded times them; a server's
// history keeps the larger ones.
func TestAgentHistory_SmallerBoundsThanAServers(t *testing.T) {
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 4000) + `"}]}}`)
	a := NewAgentHistories(nil)
	agent := a.Open("s", "agent", "token:default")
	server := NewHistory(nil)
	for range 2000 {
		agent.Add(false, answer)
		server.Add(false, answer)
	}
	got := agent.Snapshot()
	if got.Bytes > AgentHistoryBytes || len(got.Messages) > AgentHistoryMessages || got.Dropped == 0 {
		t.Errorf("agent session kept %d messages, %d bytes (dropped %d); want at most %d and %d", len(got.Messages), got.Bytes, got.Dropped, AgentHistoryMessages, AgentHistoryBytes)
	}
	if len(got.Messages) < AgentHistoryBytes/len(answer)-1 {
		t.Errorf("agent session kept only %d messages of %d bytes", len(got.Messages), len(answer))
	}
	if s := server.Snapshot(); s.Bytes <= AgentHistoryBytes || s.Bytes > HistoryBytes {
		t.Errorf("server history kept %d bytes, want more than %d and at most %d", s.Bytes, AgentHistoryBytes, HistoryBytes)
	}
	for _, m := range got.Messages {
		if !bytes.Equal(m.Raw, answer) {
			t.Fatalf("a kept message changed: %.40q", m.Raw)
		}
	}
}
