package conn

import (
	"context"
	"encoding/json"
	"reflect"
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

// envelopeByJSON is what readEnvelope must agree with: encoding/json reading the
// four fields. Where encoding/json would match a key in another case ("Method"),
// which readEnvelope does not, folded is true and the two are not compared.
func envelopeByJSON(raw []byte) (env envelope, ok, folded bool) {
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil || members == nil {
		return envelope{}, false, false
	}
	for k := range members {
		for _, name := range []string{"jsonrpc", "id", "method", "error"} {
			if k != name && strings.EqualFold(k, name) {
				return envelope{}, false, true
			}
		}
	}
	var head struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &head) != nil {
		return envelope{}, false, false
	}
	return envelope{JSONRPC: head.JSONRPC, Method: head.Method, ID: head.ID, Error: head.Error}, true, false
}

var envelopeCases = []string{
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,{"b":null}]}}}`,
	`{"jsonrpc":"2.0","id":"abc","result":{"content":[{"type":"text","text":"a \"quoted\" \u00e9 \ud83d\ude00"}]}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`,
	` { "jsonrpc" : "2.0" , "id" : 1 , "result" : { } } `,
	`{"jsonrpc":"2.0","method":"a","method":"b","id":1}`,
	`{"jsonrpc":"2.0","method":"a","method":"","id":1}`,
	`{"jsonrpc":"2.0","method":"a","method":null,"id":1}`,
	`{"jsonrpc":null,"id":1}`,
	`{"jsonrpc":"2.0","id":null,"result":1}`,
	`{"jsonrpc":"2.0","id":1.5e3,"result":true}`,
	`{"json\u0072pc":"2.0","id":1,"result":1}`,
	`{"jsonrpc":"2.0","id":1,"error":null,"result":[]}`,
	`{"jsonrpc":"2.0","method":"m\u0000x"}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\xfe\",\"id\":2}",
	`{}`,
	`[]`,
	`null`,
	`"x"`,
	``,
	`{`,
	`{"jsonrpc":"2.0",}`,
	`{"jsonrpc":"2.0" "id":1}`,
	`{"jsonrpc":2,"id":1}`,
	`{"method":{},"id":1}`,
	`{"jsonrpc":"2.0","id":1}x`,
	`{"jsonrpc":"2.0","id":1}{}`,
	`{"jsonrpc":"2.0","id":01}`,
	`{"jsonrpc":"2.0","params":[1,2,]}`,
	`{"jsonrpc":"2.0","params":"` + "\x01" + `"}`,
	`{"jsonrpc":"2.0","params":tru}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1}}` + "\n",
}

// TestReadEnvelope_AsEncodingJSON: a history reads a message's envelope as
// encoding/json reads it, for messages, near-messages and what is no JSON at all.
func TestReadEnvelope_AsEncodingJSON(t *testing.T) {
	for _, c := range envelopeCases {
		got, gotOK := readEnvelope([]byte(c))
		want, wantOK, _ := envelopeByJSON([]byte(c))
		if gotOK != wantOK || (gotOK && !reflect.DeepEqual(normEnvelope(got), normEnvelope(want))) {
			t.Errorf("%q: read %+v %v, encoding/json %+v %v", c, got, gotOK, want, wantOK)
		}
	}
}

// FuzzReadEnvelope holds readEnvelope to encoding/json on any input.
func FuzzReadEnvelope(f *testing.F) {
	for _, c := range envelopeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, gotOK := readEnvelope(raw)
		want, wantOK, folded := envelopeByJSON(raw)
		if folded {
			t.Skip() // a key in another case: encoding/json matches it, readEnvelope does not
		}
		if gotOK != wantOK || (gotOK && !reflect.DeepEqual(normEnvelope(got), normEnvelope(want))) {
			t.Fatalf("%q: read %+v %v, encoding/json %+v %v", raw, got, gotOK, want, wantOK)
		}
	})
}

// normEnvelope makes an empty and a nil byte field the same.
func normEnvelope(e envelope) envelope {
	if len(e.ID) == 0 {
		e.ID = nil
	}
	if len(e.Error) == 0 {
		e.Error = nil
	}
	return e
}
