package conn

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func req(id int64, method, params string) *jsonrpc.Request {
	rid, _ := jsonrpc.MakeID(float64(id))
	return &jsonrpc.Request{ID: rid, Method: method, Params: json.RawMessage(params)}
}

// The ring is bounded by count and by bytes, counts what it forgot, cuts one large
// message, and names a response by its request's method.
func TestHistoryBounds(t *testing.T) {
	h := NewHistory(nil)
	for i := range HistoryMessages + 10 {
		h.addMsg(true, req(int64(i), "tools/call", `{}`), nil)
	}
	s := h.Snapshot()
	if len(s.Messages) != HistoryMessages || s.Dropped != 10 || s.Messages[0].Seq != 11 {
		t.Fatalf("count bound: %d kept, %d dropped, oldest seq %d", len(s.Messages), s.Dropped, s.Messages[0].Seq)
	}
	if len(h.methods) > 2*historyIDs {
		t.Errorf("%d request ids remembered, want at most %d", len(h.methods), 2*historyIDs)
	}

	h = NewHistory(nil)
	big := `{"x":"` + strings.Repeat("a", 2*HistoryMessageBytes) + `"}`
	for i := range 200 {
		h.addMsg(false, req(int64(i), "sampling/createMessage", big), nil)
	}
	s = h.Snapshot()
	if s.Bytes > HistoryBytes || s.Dropped == 0 {
		t.Fatalf("byte bound: %d bytes kept, %d dropped", s.Bytes, s.Dropped)
	}
	if e := s.Messages[0]; !e.Cut || len(e.Raw) != HistoryMessageBytes || e.Size <= HistoryMessageBytes {
		t.Errorf("a large message: cut %v, %d of %d bytes", e.Cut, len(e.Raw), e.Size)
	}

	h = NewHistory(nil)
	h.addMsg(true, req(7, "ping", `{}`), nil)
	rid, _ := jsonrpc.MakeID(float64(7))
	h.addMsg(false, &jsonrpc.Response{ID: rid, Result: json.RawMessage(`{}`)}, nil)
	h.addMsg(false, &jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(`{}`)}, nil)
	s = h.Snapshot()
	if got := s.Messages[1]; got.Kind != "response" || got.Method != "ping" || got.ID != "7" {
		t.Errorf("the response: %+v", got)
	}
	if got := s.Messages[2]; got.Kind != "notification" || got.Method != "notifications/progress" || got.ID != "" {
		t.Errorf("the notification: %+v", got)
	}
}

// benchConn answers every write with a response to it, as a server would.
type benchConn struct {
	mcp.Connection
	out chan jsonrpc.Message
}

func (c *benchConn) Write(_ context.Context, msg jsonrpc.Message) error {
	r := msg.(*jsonrpc.Request)
	c.out <- &jsonrpc.Response{ID: r.ID, Result: json.RawMessage(`{"content":[{"type":"text","text":"a result of about one hundred bytes, as a small tool answers it"}]}`)}
	return nil
}

func (c *benchConn) Read(context.Context) (jsonrpc.Message, error) { return <-c.out, nil }

// BenchmarkCaptureConnCall is one call's request and response through the capture,
// without and with the protocol history.
func BenchmarkCaptureConnCall(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "history=off"
		if on {
			name = "history=on"
		}
		b.Run(name, func(b *testing.B) {
			c := &captureConn{Connection: &benchConn{out: make(chan jsonrpc.Message, 1)}, sink: newCapture()}
			if on {
				c.hist = NewHistory(nil)
			}
			ctx := context.Background()
			call := req(1, "tools/call", `{"name":"search_docs","arguments":{"query":"tier"}}`)
			b.ReportAllocs()
			for b.Loop() {
				_ = c.Write(ctx, call)
				_, _ = c.Read(ctx)
			}
		})
	}
}

// The history's own encoder writes what go-sdk's does, byte for byte.
func TestEncodeWireMatchesGoSDK(t *testing.T) {
	sid, _ := jsonrpc.MakeID("a\"b\x01")
	nid, _ := jsonrpc.MakeID(float64(42))
	for _, msg := range []jsonrpc.Message{
		req(3, "tools/call", `{"name":"x","arguments":{"q":"\u00e9"}}`),
		&jsonrpc.Request{ID: sid, Method: "weird\"/\x7f<\xffmethod", Params: json.RawMessage(`{}`)},
		&jsonrpc.Request{Method: "notifications/initialized"},
		&jsonrpc.Response{ID: nid, Result: json.RawMessage(`{"ok":true}`)},
		&jsonrpc.Response{ID: sid, Error: &jsonrpc.Error{Code: -32601, Message: "no"}},
	} {
		want, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := encodeWire(msg)
		if string(got) != string(want) {
			t.Errorf("encodeWire = %s\n            want %s", got, want)
		}
	}
}
