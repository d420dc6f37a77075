package session

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
	sink   *capture
	life   context.Context // the connection's lifetime
	cancel context.CancelFunc
	// atHTTP: the capture happens in the HTTP round trip (httpCapture), and the
	// connection is returned unwrapped. go-sdk's streamable client connection has an
	// unexported hook (sessionUpdated) that opens the standalone event stream after
	// initialize; a wrapper would hide it, and server-initiated messages
	// (list_changed, elicitation) would never arrive.
	atHTTP bool
}

type capture struct {
	mu      sync.Mutex
	pending map[string]bool // ids of tools/list requests in flight
	page    *rawPage
	err     error
}

func newCapture() *capture { return &capture{pending: map[string]bool{}} }

// take returns and clears the last captured page.
func (c *capture) take() (*rawPage, error) {
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
		return &captureConn{Connection: r.conn, sink: t.sink}, nil
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
	sink *capture
}

func idKey(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.sink.sent(msg)
	return c.Connection.Write(ctx, msg)
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.sink.received(msg)
	}
	return msg, err
}

// sent notes an outgoing tools/list request, so that its response is kept.
func (c *capture) sent(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" && req.ID.IsValid() {
		c.mu.Lock()
		c.pending[idKey(req.ID)] = true
		c.mu.Unlock()
	}
}

// received keeps the raw result of a response to a noted tools/list request.
func (c *capture) received(msg jsonrpc.Message) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || !resp.ID.IsValid() {
		return
	}
	key := idKey(resp.ID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.pending[key] {
		return
	}
	delete(c.pending, key)
	if resp.Error == nil {
		var p rawPage
		if err := json.Unmarshal(resp.Result, &p); err != nil {
			c.page, c.err = nil, err
		} else {
			c.page, c.err = &p, nil
		}
	}
}
