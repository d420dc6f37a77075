package conn

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// httpCapture is the capture for streamable HTTP, done in the round trip: a POST that
// carries a tools/list request is noted, and its response body (JSON or an event
// stream) is read alongside go-sdk, each message handed to the capture before go-sdk
// sees the end of it.
func httpCapture(capt *Capture, req *http.Request) bool {
	if capt == nil || req.Method != http.MethodPost || req.Body == nil {
		return false
	}
	var body []byte
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			return false
		}
		body, err = io.ReadAll(io.LimitReader(rc, MaxMessageBytes))
		rc.Close()
		if err != nil {
			return false
		}
	} else {
		return false
	}
	if !bytes.Contains(body, toolsListMethod) {
		// The body is airlock's own request, encoded by go-sdk, which writes a method
		// name as it is (no escapes in "tools/list"): a body without those bytes is no
		// listing, and is not decoded a second time (a tools/call's arguments would be).
		return false
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return false
	}
	r, ok := msg.(*jsonrpc.Request)
	if !ok || r.Method != "tools/list" {
		return false
	}
	capt.sent(msg)
	return true
}

// toolsListMethod is the method of a listing's request as go-sdk writes it.
var toolsListMethod = []byte(`"tools/list"`)

// tapBody wraps a response body so that every JSON-RPC message in it reaches the capture.
func tapBody(capt *Capture, resp *http.Response) {
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &sseTap{rc: resp.Body, capt: capt}
		return
	}
	resp.Body = &jsonTap{rc: resp.Body, capt: capt}
}

// jsonTap keeps a JSON body (already bounded by limitedBody) and decodes it at its end.
type jsonTap struct {
	rc   io.ReadCloser
	capt *Capture
	buf  bytes.Buffer
	done bool
}

func (t *jsonTap) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	t.buf.Write(p[:n])
	if err == io.EOF && !t.done {
		t.done = true
		if msg, derr := jsonrpc.DecodeMessage(t.buf.Bytes()); derr == nil {
			t.capt.received(msg)
		}
	}
	return n, err
}

func (t *jsonTap) Close() error { return t.rc.Close() }

// sseTap follows an event stream line by line and decodes each event's data.
type sseTap struct {
	rc   io.ReadCloser
	capt *Capture
	line []byte
	data []byte
	over bool // the event's data passed MaxMessageBytes: not captured (go-sdk drops it too)
}

func (t *sseTap) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	for _, c := range p[:n] {
		if c != '\n' {
			if len(t.line) < MaxMessageBytes {
				t.line = append(t.line, c)
			} else {
				t.over = true
			}
			continue
		}
		line := bytes.TrimSuffix(t.line, []byte{'\r'})
		switch {
		case len(line) == 0:
			if len(t.data) > 0 && !t.over {
				if msg, derr := jsonrpc.DecodeMessage(t.data); derr == nil {
					t.capt.received(msg)
				}
			}
			t.data, t.over = t.data[:0], false
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if len(t.data) > 0 {
				t.data = append(t.data, '\n')
			}
			if len(t.data)+len(v) > MaxMessageBytes {
				t.over = true
			} else {
				t.data = append(t.data, v...)
			}
		}
		t.line = t.line[:0]
	}
	return n, err
}

func (t *sseTap) Close() error { return t.rc.Close() }
