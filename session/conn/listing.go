package conn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds on one server's tool listing; each one reached is reported as a notice.
const (
	// MaxToolPages bounds the pages of one tools/list walk.
	MaxToolPages = 1000
	// MaxToolsPerServer bounds the tools kept for one server.
	MaxToolsPerServer = 20000
)

// ListTools walks tools/list with airlock's own pagination loop: a page cap, a cap on
// tools, and repeated-cursor detection, each reported in notices rather than silently
// truncating. It returns the raw tool objects the capture kept, in listing order.
func ListTools(ctx context.Context, cs *mcp.ClientSession, capt *Capture) ([]json.RawMessage, []string, error) {
	var (
		pages   [][]json.RawMessage // each page's tools, joined once at the end
		total   int
		notices []string
		cursor  string
		seen    = map[string]bool{}
	)
	for page := 0; ; page++ {
		if page == MaxToolPages {
			notices = append(notices, fmt.Sprintf("tools/list stopped after %d pages; the rest is not shown", MaxToolPages))
			break
		}
		_, _ = capt.take()
		_, sdkErr := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		p, err := capt.take()
		switch {
		case p != nil && sdkErr != nil:
			// go-sdk rejects a whole page for one malformed entry; the raw page is
			// still usable, and the bad entries are skipped and counted below.
		case sdkErr != nil:
			return nil, notices, fmt.Errorf("listing tools: %w", sdkErr)
		case err != nil:
			return nil, notices, fmt.Errorf("listing tools: decoding the result: %w", err)
		case p == nil:
			return nil, notices, errors.New("listing tools: no result was captured")
		}
		pages = append(pages, p.Tools)
		total += len(p.Tools)
		if total > MaxToolsPerServer {
			notices = append(notices, fmt.Sprintf("server listed more than %d tools; only the first %d are kept", MaxToolsPerServer, MaxToolsPerServer))
			break
		}
		if p.NextCursor == "" {
			break
		}
		if seen[p.NextCursor] {
			notices = append(notices, fmt.Sprintf("tools/list repeated a cursor after %d pages; stopped there", page+1))
			break
		}
		seen[p.NextCursor] = true
		cursor = p.NextCursor
	}
	// One slice of the listing's size: appended page by page it grew by doubling,
	// 0.7 MB and five copies for 10,000 tools.
	raws := make([]json.RawMessage, 0, min(total, MaxToolsPerServer))
	for _, p := range pages {
		raws = append(raws, p[:min(len(p), cap(raws)-len(raws))]...)
	}
	return raws, notices, nil
}
