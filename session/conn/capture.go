package conn

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawPage is one tools/list result exactly as the server sent it. go-sdk decodes tools
// into structs that lose "absent vs false" for readOnlyHint and silently drops tools it
// considers invalid, so airlock classifies and pins from these bytes instead.
type rawPage struct {
	Tools      []json.RawMessage `json:"tools"`
	NextCursor string            `json:"nextCursor,omitempty"`
}

// captureTransport wraps a transport and keeps the raw result of the latest tools/list
// response. The session serialises tools/list per server, so one slot is enough.
type captureTransport struct {
	inner  mcp.Transport
	sink   *Capture
	hist   *History        // nil: no protocol history
	life   context.Context // the connection's lifetime
	cancel context.CancelFunc
	// atHTTP: the capture happens in the HTTP round trip (httpCapture), and the
	// connection is returned unwrapped. go-sdk's streamable client connection has an
	// unexported hook (sessionUpdated) that opens the standalone event stream after
	// initialize; a wrapper would hide it, and server-initiated messages
	// (list_changed, elicitation) would never arrive.
	atHTTP bool
	// trim: hand go-sdk an empty tools list in place of a captured page (see
	// captureConn.Read). Set only where go-sdk has no use for the tools themselves:
	// stdio and in-process servers, never streamable HTTP (go-sdk looks up listed
	// tools there for x-mcp-header parameters).
	trim bool
}

// Capture keeps the raw result of a connection's latest tools/list response, taken
// by ListTools: the bytes tools are classified and pinned from.
type Capture struct {
	mu      sync.Mutex
	pending map[string]bool // ids of tools/list requests in flight
	page    *rawPage
	err     error
	early   int // pages split before go-sdk read them (pageReader)
	// earlyRaw is the response line of the page split last, by its id, until the
	// trimmed response reaches captureConn.Read: the bytes the history keeps of it.
	earlyKey string
	earlyRaw []byte
}

func newCapture() *Capture { return &Capture{pending: map[string]bool{}} }

// PagesSplitEarly is how many tools/list pages were split by the stdio server's
// stdout reader (pageReader) rather than after go-sdk read them.
func (c *Capture) PagesSplitEarly() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.early
}

// take returns and clears the last captured page.
func (c *Capture) take() (*rawPage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, err := c.page, c.err
	c.page, c.err = nil, nil
	return p, err
}

// Connect connects the inner transport with the connection's lifetime context, not
// ctx: the SSE transports tie their event stream to the context they are connected
// with, and ctx only bounds the handshake. Connecting still gives up when ctx ends.
func (t *captureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	type result struct {
		conn mcp.Connection
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		conn, err := t.inner.Connect(t.life)
		ch <- result{conn, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		if t.atHTTP {
			return r.conn, nil
		}
		return &captureConn{Connection: r.conn, sink: t.sink, hist: t.hist, trim: t.trim}, nil
	case <-ctx.Done():
		t.cancel()
		go func() {
			if r := <-ch; r.conn != nil {
				_ = r.conn.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

type captureConn struct {
	mcp.Connection
	sink *Capture
	hist *History
	trim bool
}

func idKey(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.sink.sent(msg)
	c.hist.addMsg(true, msg, nil)
	return c.Connection.Write(ctx, msg)
}

// Read hands every message to the capture. With trim, a tools/list response whose page
// the capture kept reaches go-sdk with an empty tools list: airlock reads the tools only
// from the kept bytes, and go-sdk would otherwise decode every tool once more and
// re-marshal each input schema to validate it (at 10,000 tools, most of the time to the
// first snapshot). A page the capture could not read is passed on unchanged, so go-sdk
// reports its error as before.
func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		// A page split early reaches here trimmed: the history keeps the server's bytes.
		c.hist.addMsg(false, msg, c.sink.splitRaw(msg))
		if c.sink.received(msg) && c.trim {
			trimmed := *msg.(*jsonrpc.Response)
			trimmed.Result = emptyToolsResult
			msg = &trimmed
		}
	}
	return msg, err
}

// emptyToolsResult is what go-sdk gets for a tools/list page airlock captured.
var emptyToolsResult = json.RawMessage(`{"tools":[]}`)

// sent notes an outgoing tools/list request, so that its response is kept.
func (c *Capture) sent(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" && req.ID.IsValid() {
		c.mu.Lock()
		c.pending[idKey(req.ID)] = true
		c.mu.Unlock()
	}
}

// listing reports whether a tools/list request is in flight.
func (c *Capture) listing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) > 0
}

// deliver keeps page as the result of the tools/list request whose id is key (as
// idKey writes it), split before go-sdk read the response (pageReader); false when no
// such request is in flight.
func (c *Capture) deliver(key string, page *rawPage, line []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.pending[key] {
		return false
	}
	delete(c.pending, key)
	c.page, c.err = page, nil
	c.early++
	c.earlyKey, c.earlyRaw = key, line
	return true
}

// splitRaw returns (and forgets) the server's own bytes of msg when it is the
// response whose page was split early (pageReader), nil otherwise.
func (c *Capture) splitRaw(msg jsonrpc.Message) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.earlyRaw == nil {
		return nil
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || !resp.ID.IsValid() || idKey(resp.ID) != c.earlyKey {
		return nil
	}
	raw := c.earlyRaw
	c.earlyKey, c.earlyRaw = "", nil
	return raw
}

// received keeps the raw result of a response to a noted tools/list request, and
// reports whether it kept a page.
func (c *Capture) received(msg jsonrpc.Message) bool {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || !resp.ID.IsValid() {
		return false
	}
	key := idKey(resp.ID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.pending[key] {
		return false
	}
	delete(c.pending, key)
	if resp.Error != nil {
		return false
	}
	var p rawPage
	if err := json.Unmarshal(resp.Result, &p); err != nil {
		c.page, c.err = nil, err
		return false
	}
	c.page, c.err = &p, nil
	return true
}
