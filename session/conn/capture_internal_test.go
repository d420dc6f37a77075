package conn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeConn hands out queued messages and records what was written.
type fakeConn struct {
	mcp.Connection
	in []jsonrpc.Message
}

func (f *fakeConn) Read(context.Context) (jsonrpc.Message, error) {
	m := f.in[0]
	f.in = f.in[1:]
	return m, nil
}

func (f *fakeConn) Write(context.Context, jsonrpc.Message) error { return nil }

func listRequest(t testing.TB, id int64) *jsonrpc.Request {
	t.Helper()
	rid, err := jsonrpc.MakeID(float64(id))
	if err != nil {
		t.Fatal(err)
	}
	return &jsonrpc.Request{ID: rid, Method: "tools/list"}
}

// TestCapture_GoSDKGetsEmptyPageWhenCaptured: on stdio and in-process connections, a
// tools/list page the capture kept reaches go-sdk as an empty list (airlock reads the
// kept bytes; go-sdk's own decoding of 10,000 tools was most of the time to the first
// snapshot), while the capture keeps every tool byte for byte. A page the capture could
// not read, a response nobody asked to capture, and every message on a connection
// without trim pass unchanged.
func TestCapture_GoSDKGetsEmptyPageWhenCaptured(t *testing.T) {
	ctx := context.Background()
	page := json.RawMessage(`{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b", "inputSchema":{}}],"nextCursor":"c2"}`)
	for _, trim := range []bool{true, false} {
		t.Run(fmt.Sprintf("trim=%v", trim), func(t *testing.T) {
			req := listRequest(t, 1)
			other := listRequest(t, 2)
			other.Method = "resources/list"
			bad := listRequest(t, 3)
			inner := &fakeConn{in: []jsonrpc.Message{
				&jsonrpc.Response{ID: req.ID, Result: page},
				&jsonrpc.Response{ID: other.ID, Result: page},
				&jsonrpc.Response{ID: bad.ID, Result: json.RawMessage(`{"tools":{"not":"a list"}}`)},
			}}
			capt := newCapture()
			c := &captureConn{Connection: inner, sink: capt, trim: trim}
			for _, r := range []*jsonrpc.Request{req, other, bad} {
				if err := c.Write(ctx, r); err != nil {
					t.Fatal(err)
				}
			}

			got, err := c.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			resp := got.(*jsonrpc.Response)
			want := string(page)
			if trim {
				want = `{"tools":[]}`
			}
			if string(resp.Result) != want || resp.ID != req.ID {
				t.Errorf("go-sdk got %s (id %v), want %s (id %v)", resp.Result, resp.ID, want, req.ID)
			}
			p, err := capt.take()
			if err != nil || p == nil || len(p.Tools) != 2 || p.NextCursor != "c2" {
				t.Fatalf("capture kept %+v, %v; want both tools and the cursor", p, err)
			}
			if string(p.Tools[1]) != `{"name":"b", "inputSchema":{}}` {
				t.Errorf("capture changed a tool's bytes: %s", p.Tools[1])
			}

			for _, wantID := range []jsonrpc.ID{other.ID, bad.ID} {
				got, err := c.Read(ctx)
				if err != nil {
					t.Fatal(err)
				}
				resp := got.(*jsonrpc.Response)
				if resp.ID != wantID || strings.Contains(string(resp.Result), `"tools":[]`) {
					t.Errorf("response %v reached go-sdk as %s; want it unchanged", resp.ID, resp.Result)
				}
			}
			if _, err := capt.take(); err == nil {
				t.Error("a page that is not a tool list: capture reported no error")
			}
		})
	}
}

// BenchmarkHTTPCaptureCall is what the round trip's capture costs a tools/call POST,
// which is no listing: it is looked at, not decoded.
func BenchmarkHTTPCaptureCall(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"query":"airlock design","limit":10}}}`)
	capt := newCapture()
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
		if httpCapture(capt, nil, req) {
			b.Fatal("a tools/call was taken for a listing")
		}
	}
}

// TestHTTPCapture_SeesListingsAsGoSDKWritesThem: the capture's look for the listing's
// method finds a tools/list request as go-sdk encodes it, with and without a cursor,
// and takes no other request for one, even one whose arguments name the method.
func TestHTTPCapture_SeesListingsAsGoSDKWritesThem(t *testing.T) {
	cursor := &jsonrpc.Request{ID: listRequest(t, 3).ID, Method: "tools/list", Params: json.RawMessage(`{"cursor":"p2"}`)}
	other, err := jsonrpc.MakeID(float64(4))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		msg  *jsonrpc.Request
		want bool
	}{
		{listRequest(t, 2), true},
		{cursor, true},
		{&jsonrpc.Request{ID: other, Method: "tools/call", Params: json.RawMessage(`{"name":"x","arguments":{"m":"tools/list"}}`)}, false},
		{&jsonrpc.Request{ID: other, Method: "resources/list"}, false},
	} {
		body, err := jsonrpc.EncodeMessage(c.msg)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
		if got := httpCapture(newCapture(), nil, req); got != c.want {
			t.Errorf("httpCapture(%s) = %v, want %v", body, got, c.want)
		}
	}
}

// BenchmarkHTTPHistoryCall is what a streamable HTTP server's protocol history costs
// one call: the request's body kept as it is posted, and its answer as it is read.
func BenchmarkHTTPHistoryCall(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_doc","arguments":{"id":"mcp-overview"}}}`)
	answer := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + strings.Repeat("MCP is a protocol. ", 200) + `"}]}}`)
	h := NewHistory(nil)
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
		if httpCapture(nil, h, req) {
			b.Fatal("a tools/call was taken for a listing")
		}
		tapped(nil, h, answer)
	}
}
