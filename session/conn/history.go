package conn

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/airlock-mcp/airlock/internal/jsonlex"
	"github.com/airlock-mcp/airlock/internal/model"
)

// The bounds of one server's protocol history: the newest HistoryMessages messages,
// at most HistoryBytes of their bytes in all, each message's bytes cut at
// HistoryMessageBytes. Older messages are forgotten and counted.
const (
	HistoryMessages     = 1000
	HistoryBytes        = 4 << 20
	HistoryMessageBytes = 64 << 10
)

// historyIDs bounds the request ids a History remembers the method of, so that a
// server that never answers cannot grow it.
const historyIDs = 256

// History keeps the JSON-RPC messages of a server's connections, both ways, in a
// ring bounded by count and bytes. It is fed where the capture already sees every
// message (captureConn, and the HTTP round trip for streamable HTTP), so a message is
// kept once, in the ring, and nowhere else. Safe for concurrent use.
type History struct {
	mu      sync.Mutex
	ring    []model.HistoryMessage // circular, len maxMsgs once full
	start   int                    // index of the oldest message
	n       int
	bytes   int
	dropped int
	seq     uint64
	methods map[string]string // request id (as JSON) → method, for its response
	order   []string          // the ids of methods in the order they were noted
	now     func() time.Time
	// The ring's bounds: HistoryMessages and HistoryBytes for a server's,
	// AgentHistoryMessages and AgentHistoryBytes for an agent session's.
	maxMsgs, maxBytes int
}

// NewHistory returns an empty history with a server's bounds; now is its clock
// (time.Now when nil).
func NewHistory(now func() time.Time) *History {
	return newHistory(now, HistoryMessages, HistoryBytes)
}

func newHistory(now func() time.Time, maxMsgs, maxBytes int) *History {
	if now == nil {
		now = time.Now
	}
	return &History{methods: map[string]string{}, now: now, maxMsgs: maxMsgs, maxBytes: maxBytes}
}

// Snapshot returns the kept messages, oldest first. The Raw slices are shared and
// never written again.
func (h *History) Snapshot() model.History {
	if h == nil {
		return model.History{}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := model.History{Messages: make([]model.HistoryMessage, 0, h.n), Dropped: h.dropped, Bytes: h.bytes}
	for i := 0; i < h.n; i++ {
		out.Messages = append(out.Messages, h.ring[(h.start+i)%h.maxMsgs])
	}
	return out
}

// addMsg keeps msg, encoding it when raw is nil (the message came decoded).
func (h *History) addMsg(out bool, msg jsonrpc.Message, raw []byte) {
	if h == nil || msg == nil {
		return
	}
	owned := false
	if raw == nil {
		b, err := encodeWire(msg)
		if err != nil {
			return
		}
		raw, owned = b, true
	}
	e := model.HistoryMessage{Out: out, Size: len(raw)}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		e.Method = m.Method
		if m.ID.IsValid() {
			e.Kind, e.ID = "request", string(appendID(nil, m.ID))
		} else {
			e.Kind = "notification"
		}
	case *jsonrpc.Response:
		e.Kind = "response"
		if m.Error != nil {
			e.Kind = "error"
		}
		if m.ID.IsValid() {
			e.ID = string(appendID(nil, m.ID))
		}
	}
	h.keep(e, raw, owned)
}

// keep keeps e with raw, its bytes (owned: raw is the history's own, else copied).
func (h *History) keep(e model.HistoryMessage, raw []byte, owned bool) {
	if len(raw) > HistoryMessageBytes {
		raw, e.Cut, owned = raw[:HistoryMessageBytes], true, false
	}
	if owned {
		e.Raw = raw
	} else {
		e.Raw = bytes.Clone(raw)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch e.Kind {
	case "request":
		h.noteID(dirKey(e.Out, e.ID), e.Method)
	case "response", "error":
		// A response answers a request that went the other way.
		k := dirKey(!e.Out, e.ID)
		if meth, ok := h.methods[k]; ok {
			e.Method = meth
			delete(h.methods, k)
		}
	}
	h.seq++
	e.Seq, e.At = h.seq, h.now()
	if h.ring == nil {
		h.ring = make([]model.HistoryMessage, h.maxMsgs)
	}
	for h.n > 0 && (h.n == h.maxMsgs || h.bytes+len(e.Raw) > h.maxBytes) {
		old := &h.ring[h.start]
		h.bytes -= len(old.Raw)
		*old = model.HistoryMessage{}
		h.start = (h.start + 1) % h.maxMsgs
		h.n--
		h.dropped++
	}
	h.ring[(h.start+h.n)%h.maxMsgs] = e
	h.n++
	h.bytes += len(e.Raw)
}

// Add keeps one message read or written as bytes (a streamable HTTP server's, and the
// gateway's agent sessions): what it is is read from its id, method and error alone
// (readEnvelope; its params and result are only skipped, not decoded). Bytes that
// are no JSON-RPC 2.0 message are not kept.
func (h *History) Add(out bool, raw []byte) {
	if h == nil {
		return
	}
	head, ok := readEnvelope(raw)
	if !ok || head.JSONRPC != "2.0" {
		return
	}
	e := model.HistoryMessage{Out: out, Size: len(raw), Method: head.Method}
	hasID := len(head.ID) > 0 && string(head.ID) != "null"
	if hasID {
		e.ID = string(head.ID)
	}
	switch {
	case head.Method != "" && hasID:
		e.Kind = "request"
	case head.Method != "":
		e.Kind = "notification"
	case len(head.Error) > 0 && string(head.Error) != "null":
		e.Kind = "error"
	default:
		e.Kind = "response"
	}
	h.keep(e, raw, false)
}

// envelope is what a history reads of a JSON-RPC message: its version, id and method,
// and its error's bytes (params and result are skipped).
type envelope struct {
	JSONRPC, Method string
	ID, Error       []byte
}

// readEnvelope reads the envelope of the one JSON object raw holds, skipping every
// other member's value with jsonlex (checked, not decoded), as encoding/json would
// read it into those four fields (a key given twice counts its last value, null
// leaves a string as it was), except that keys match exactly, as JSON-RPC names
// them. It is false for anything but one valid JSON object.
func readEnvelope(raw []byte) (envelope, bool) {
	var env envelope
	i := jsonlex.Space(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return env, false
	}
	var key []byte
	var e jsonlex.Err
	for i = jsonlex.Space(raw, i+1); i < len(raw) && raw[i] != '}'; {
		if raw[i] != '"' {
			return env, false
		}
		if key, i, e = jsonlex.AppendString(key[:0], raw, i); e != jsonlex.OK {
			return env, false
		}
		if i = jsonlex.Space(raw, i); i >= len(raw) || raw[i] != ':' {
			return env, false
		}
		start := jsonlex.Space(raw, i+1)
		var text []byte
		null := false
		switch string(key) {
		case "jsonrpc", "method":
			switch {
			case start < len(raw) && raw[start] == '"':
				text, i, e = jsonlex.AppendString(nil, raw, start)
			case start < len(raw) && raw[start] == 'n':
				i, e = jsonlex.Literal(raw, start, "null")
				null = true // leaves the field as it was
			default:
				return env, false // as encoding/json refuses a number for a string
			}
		default:
			i, e = jsonlex.Skip(raw, start, jsonlex.MaxNesting)
		}
		if e != jsonlex.OK {
			return env, false
		}
		switch string(key) {
		case "jsonrpc":
			if !null {
				env.JSONRPC = string(text)
			}
		case "method":
			if !null {
				env.Method = string(text)
			}
		case "id":
			env.ID = raw[start:i]
		case "error":
			env.Error = raw[start:i]
		}
		if i = jsonlex.Space(raw, i); i < len(raw) && raw[i] == ',' {
			if i = jsonlex.Space(raw, i+1); i < len(raw) && raw[i] == '}' {
				return env, false // a trailing comma
			}
		} else if i >= len(raw) || raw[i] != '}' {
			return env, false
		}
	}
	if i >= len(raw) {
		return env, false
	}
	return env, jsonlex.Space(raw, i+1) == len(raw)
}

func dirKey(out bool, id string) string {
	if out {
		return ">" + id
	}
	return "<" + id
}

// noteID remembers a request's method until its response, forgetting the oldest
// beyond historyIDs. Called with h.mu held.
func (h *History) noteID(k, method string) {
	if _, ok := h.methods[k]; !ok {
		h.order = append(h.order, k)
	}
	h.methods[k] = method
	if len(h.order) > 2*historyIDs {
		// Forget answered ids first (they are gone from methods already), then the
		// oldest; done once per historyIDs requests, so noting stays O(1) amortised.
		kept := h.order[:0]
		for _, o := range h.order {
			if _, ok := h.methods[o]; ok {
				kept = append(kept, o)
			}
		}
		for len(kept) > historyIDs {
			delete(h.methods, kept[0])
			kept = kept[1:]
		}
		h.order = append([]string(nil), kept...)
	}
}

// encodeWire writes msg as JSON-RPC 2.0, as go-sdk writes it (jsonrpc, id, method,
// params; or id, result or error), without encoding/json's pass over the params and
// result it already holds as bytes: the history's cost on every message.
func encodeWire(msg jsonrpc.Message) ([]byte, error) {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		b := make([]byte, 0, 48+len(m.Method)+len(m.Params))
		b = append(b, `{"jsonrpc":"2.0"`...)
		if m.ID.IsValid() {
			b = append(b, `,"id":`...)
			b = appendID(b, m.ID)
		}
		b = append(b, `,"method":`...)
		b = appendString(b, m.Method)
		if len(m.Params) > 0 {
			b = append(b, `,"params":`...)
			b = append(b, m.Params...)
		}
		return append(b, '}'), nil
	case *jsonrpc.Response:
		if m.Error != nil {
			return jsonrpc.EncodeMessage(msg)
		}
		b := make([]byte, 0, 40+len(m.Result))
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = appendID(b, m.ID)
		if len(m.Result) > 0 {
			b = append(b, `,"result":`...)
			b = append(b, m.Result...)
		}
		return append(b, '}'), nil
	}
	return jsonrpc.EncodeMessage(msg)
}

func appendID(b []byte, id jsonrpc.ID) []byte {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.AppendInt(b, v, 10)
	case string:
		return appendString(b, v)
	}
	return append(b, "null"...)
}

// appendString appends s as a JSON string as go-sdk's encoder writes it (no HTML
// escapes): ASCII here, anything beyond it (invalid UTF-8, U+2028) by encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(s)
			return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
		}
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

const hexDigit = "0123456789abcdef"
