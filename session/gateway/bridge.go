package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Link is how the bridge reaches the gateway, given by the session that owns the
// transports: Client is the HTTP client that adds headers only for url's origin (it
// carries the gateway token, so it must follow no redirect off that origin), and
// MaxMessageBytes bounds one JSON-RPC message on either side.
type Link struct {
	Client          func(url string, headers map[string]string) *http.Client
	MaxMessageBytes int
}

// Bridge relays JSON-RPC messages between an agent on stdio (in, out) and a running
// gateway at url, for agents that can only launch stdio servers. It carries messages
// as they are, in both directions, adding only the gateway's bearer token, and returns
// when either side ends. via is how it reaches the gateway.
func Bridge(ctx context.Context, via Link, url, token string, in io.ReadCloser, out io.WriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	local, err := (&mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: via.MaxMessageBytes}).Connect(ctx)
	if err != nil {
		return err
	}
	defer local.Close()
	remote, err := (&mcp.StreamableClientTransport{
		Endpoint: url,
		// The gateway token goes to the gateway's origin only.
		HTTPClient:   via.Client(url, map[string]string{"Authorization": "Bearer " + token}),
		MaxEventSize: via.MaxMessageBytes,
	}).Connect(ctx)
	if err != nil {
		return err
	}
	defer remote.Close()
	errc := make(chan error, 3)
	fail := func(err error) {
		select {
		case errc <- err:
		default:
		}
	}
	// Agent to gateway: a call's POST only returns once the gateway starts answering,
	// which for a call waiting on a person can be minutes, so each call is written on
	// its own goroutine; other calls are not held up behind it. Notifications and
	// responses keep their order.
	go pump(ctx, local, remote, fail, func(msg jsonrpc.Message) bool {
		req, ok := msg.(*jsonrpc.Request)
		return ok && req.IsCall()
	})
	go pump(ctx, remote, local, fail, func(jsonrpc.Message) bool { return false })
	err = <-errc
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// pump writes every message read from from to to, until a read or a write fails; it
// reports that error to fail. A message for which apart holds is written on a
// goroutine of its own, which reports its write's failure to fail as well.
func pump(ctx context.Context, from, to mcp.Connection, fail func(error), apart func(jsonrpc.Message) bool) {
	for {
		msg, err := from.Read(ctx)
		if err != nil {
			fail(err)
			return
		}
		if apart(msg) {
			go func() {
				if err := to.Write(ctx, msg); err != nil {
					fail(err)
				}
			}()
			continue
		}
		if err := to.Write(ctx, msg); err != nil {
			fail(err)
			return
		}
	}
}
