package session

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bridge relays JSON-RPC messages between an agent on stdio (in, out) and a running
// gateway at url, for agents that can only launch stdio servers. It carries messages
// as they are, in both directions, adding only the gateway's bearer token, and returns
// when either side ends.
func Bridge(ctx context.Context, url, token string, in io.ReadCloser, out io.WriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	local, err := (&mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: MaxMessageBytes}).Connect(ctx)
	if err != nil {
		return err
	}
	defer local.Close()
	remote, err := (&mcp.StreamableClientTransport{
		Endpoint:     url,
		HTTPClient:   &http.Client{Transport: &boundedTransport{base: http.DefaultTransport, headers: map[string]string{"Authorization": "Bearer " + token}}},
		MaxEventSize: MaxMessageBytes,
	}).Connect(ctx)
	if err != nil {
		return err
	}
	defer remote.Close()
	errc := make(chan error, 2)
	pump := func(from, to mcp.Connection) {
		for {
			msg, err := from.Read(ctx)
			if err != nil {
				errc <- err
				return
			}
			if err := to.Write(ctx, msg); err != nil {
				errc <- err
				return
			}
		}
	}
	go pump(local, remote)
	go pump(remote, local)
	err = <-errc
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}
