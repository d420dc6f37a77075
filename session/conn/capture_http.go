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
// sees the end of it. With a history, every POST's message is kept in it; the result
// says whether the response is to be tapped for the capture (a listing).
func httpCapture(capt *Capture, hist *History, req *http.Request) bool {
	if (capt == nil && hist == nil) || req.Method != http.MethodPost || req.Body == nil || req.GetBody == nil {
		return false
	}
	rc, err := req.GetBody()
	if err != nil {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(rc, MaxMessageBytes))
	rc.Close()
	if err != nil {
		return false
	}
	// The history reads a message's id, method and error alone (History.Add): its
	// params are not decoded for it.
	hist.Add(true, body)
	if capt == nil || !bytes.Contains(body, toolsListMethod) {
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

// tapBody wraps a response body so that every JSON-RPC message in it reaches the
// capture (when capt is set) and the history (when hist is set).
func tapBody(capt *Capture, hist *History, resp *http.Response) {
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &sseTap{rc: resp.Body, capt: capt, hist: hist}
		return
	}
	resp.Body = &jsonTap{rc: resp.Body, capt: capt, hist: hist}
}

// tapped hands one message's bytes to the history and the capture.
func tapped(capt *Capture, hist *History, data []byte) {
	hist.Add(false, data)
	if capt == nil {
		return // only a listing's answer is tapped for the capture, and decoded
	}
	if msg, err := jsonrpc.DecodeMessage(data); err == nil {
		capt.received(msg)
	}
}

// jsonTap keeps a JSON body (already bounded by limitedBody) and decodes it at its end.
type jsonTap struct {
	rc   io.ReadCloser
	capt *Capture
	hist *History
	buf  bytes.Buffer
	done bool
}

func (t *jsonTap) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	t.buf.Write(p[:n])
	if err == io.EOF && !t.done {
		t.done = true
		if t.buf.Len() > 0 {
			tapped(t.capt, t.hist, t.buf.Bytes())
		}
	}
	return n, err
}

func (t *jsonTap) Close() error { return t.rc.Close() }

// sseTap follows an event stream line by line and decodes each event's data.
type sseTap struct {
	rc   io.ReadCloser
	capt *Capture
	hist *History
	sse  sseSplit
}

func (t *sseTap) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	t.sse.feed(p[:n], func(data []byte) { tapped(t.capt, t.hist, data) })
	return n, err
}

func (t *sseTap) Close() error { return t.rc.Close() }

// sseSplit cuts an event stream into its events' data, line by line, each event's
// data bounded by MaxMessageBytes (an event beyond it is not handed on: go-sdk drops
// it too; over says how long it was).
type sseSplit struct {
	line []byte
	data []byte
	over bool // the event's data passed MaxMessageBytes
}

// feed reads p, calling emit with each whole event's data (valid only during emit).
func (s *sseSplit) feed(p []byte, emit func(data []byte)) {
	for len(p) > 0 {
		// A line's bytes are taken up to the next newline in one piece, not byte by
		// byte; a line longer than MaxMessageBytes keeps its first MaxMessageBytes.
		end := bytes.IndexByte(p, '\n')
		part := p
		if end >= 0 {
			part = p[:end]
		}
		if room := MaxMessageBytes - len(s.line); len(part) > room {
			s.line = append(s.line, part[:room]...)
			s.over = true
		} else {
			s.line = append(s.line, part...)
		}
		if end < 0 {
			return
		}
		p = p[end+1:]
		s.line = s.endLine(s.line, emit)
	}
}

// endLine reads one whole line of the stream (its newline gone) and returns the
// line buffer emptied.
func (s *sseSplit) endLine(line []byte, emit func(data []byte)) []byte {
	l := bytes.TrimSuffix(line, []byte{'\r'})
	switch {
	case len(l) == 0:
		if len(s.data) > 0 && !s.over {
			emit(s.data)
		}
		s.data, s.over = s.data[:0], false
	case bytes.HasPrefix(l, []byte("data:")):
		v := bytes.TrimPrefix(bytes.TrimPrefix(l, []byte("data:")), []byte(" "))
		if len(s.data) > 0 {
			s.data = append(s.data, '\n')
		}
		if len(s.data)+len(v) > MaxMessageBytes {
			s.over = true
		} else {
			s.data = append(s.data, v...)
		}
	}
	return line[:0]
}
