package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/airlock-mcp/airlock/session/statefile"
)

// TokenPath is where the gateway token of a state dir is kept.
func TokenPath(dir string) string { return filepath.Join(dir, "gateway.token") }

// RotateToken replaces the gateway token in dir with a new random one (owner-only,
// written atomically through statefile) and returns it. A running gateway started with that file as
// its TokenFile refuses the old token from its next request on.
func RotateToken(dir string) (string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(raw[:])
	if err := statefile.WriteFile(TokenPath(dir), []byte(tok+"\n")); err != nil {
		return "", fmt.Errorf("storing gateway token: %w", err)
	}
	return tok, nil
}

// tokenSource is the bearer token a gateway accepts. With a file it follows the
// file: each request stats it, and when the file is another one (rotation writes a
// new file and renames it into place), or its size or time changed, it is read
// again. A file that is gone, unreadable, refused by statefile (a link, another
// user's, readable by others) or holds too short a token accepts no token at all
// until it is fixed: a rotation that failed halfway never leaves the old
// token working.
type tokenSource struct {
	path string

	mu    sync.Mutex
	info  os.FileInfo
	token []byte
}

func newTokenSource(path, initial string) *tokenSource {
	ts := &tokenSource{path: path, token: []byte(initial)}
	if path != "" {
		ts.info, _ = os.Lstat(path)
	}
	return ts
}

// current returns the token to compare against (nil: accept none).
func (ts *tokenSource) current() []byte {
	if ts.path == "" {
		return ts.token
	}
	info, err := os.Lstat(ts.path)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if err != nil {
		ts.info, ts.token = nil, nil
		return nil
	}
	if ts.info != nil && os.SameFile(ts.info, info) && ts.info.ModTime().Equal(info.ModTime()) && ts.info.Size() == info.Size() && ts.info.Mode() == info.Mode() { // a chmod (which changes neither time nor size) is a change
		return ts.token
	}
	ts.info = info
	b, err := statefile.ReadFile(ts.path) // a link, or a file others may read, is refused
	tok := strings.TrimSpace(string(b))
	if err != nil || len(tok) < 32 {
		ts.token = nil
		return nil
	}
	ts.token = []byte(tok)
	return ts.token
}
