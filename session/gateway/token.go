package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/airlock-mcp/airlock/session/statefile"
)

// TokenPath is where the gateway token of a state dir is kept.
func TokenPath(dir string) string { return filepath.Join(dir, "gateway.token") }

// tokenHexLen is how many lowercase hex digits a gateway token has: 256 random bits,
// as RotateToken and OpenToken write it.
const tokenHexLen = 64

// TokenFileError is a gateway token file that holds no token as airlock writes it
// (cut short, garbled, empty, too long). Its message names the file and what to do
// and says what is wrong only by counts: the file's bytes are never shown.
type TokenFileError struct {
	Path string
	// Size is the file's length in bytes, without a trailing newline; NotHex counts
	// the bytes that are not lowercase hex digits.
	Size, NotHex int
}

func (e *TokenFileError) Error() string {
	what := fmt.Sprintf("%d bytes", e.Size)
	if e.NotHex > 0 {
		what += fmt.Sprintf(", %d of them not hex digits", e.NotHex)
	}
	return fmt.Sprintf("%s does not hold a gateway token (it holds %s; airlock writes %d hex digits): run `airlock gateway rotate-token` for a new one, then give agents the new token", e.Path, what, tokenHexLen)
}

// parseToken is the token in a token file's bytes b (one trailing newline allowed),
// or a *TokenFileError.
func parseToken(path string, b []byte) (string, error) {
	tok := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	notHex := 0
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			notHex++
		}
	}
	if len(tok) != tokenHexLen || notHex > 0 {
		return "", &TokenFileError{Path: path, Size: len(tok), NotHex: notHex}
	}
	return tok, nil
}

// ReadToken is OpenToken with the file's content checked: a token file that is
// there and may be trusted but holds no token as airlock writes it (64 hex digits)
// is refused with a *TokenFileError, never used, replaced or shown. A missing or
// refused file (a link, another user's) goes to OpenToken, which writes a new one.
func ReadToken(dir string, note func(string)) (string, error) {
	path := TokenPath(dir)
	if b, err := statefile.ReadFile(path); err == nil {
		return parseToken(path, b)
	}
	tok, err := OpenToken(dir, note)
	if err != nil {
		return "", err
	}
	return parseToken(path, []byte(tok)) // another process may have written it meanwhile
}

// RotateToken replaces the gateway token in dir with a new random one (owner-only,
// written atomically through statefile) and returns it. A running gateway started with that file as
// its TokenFile refuses the old token from its next request on and, within a second,
// ends the old token's sessions and withdraws their waiting questions, as for a
// revoked named token.
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
// file: each look stats it, and reads it again unless the stat vouches that it did
// not change since the last read (statefile.Stamp: the same file, size, mode, owner,
// modification and change time, the last read's stamp settled), so a rotation is
// seen at the next request or tick whatever the clock's granularity or an inode
// used again. A file that is gone, unreadable, refused by statefile (a link,
// another user's, readable by others) or holds no token as airlock writes it (cut
// short, garbled: parseToken) accepts no token at all until it is fixed: a rotation
// that failed halfway never leaves the old token working, and the sessions the
// default token opened end (Gateway.endRevoked).
type tokenSource struct {
	path  string
	token []byte // without a file: the one token accepted

	// reading is held while the file is read and what it held kept, so that reads
	// are kept in the order they were made.
	reading sync.Mutex
	mu      sync.Mutex
	stamp   statefile.Stamp // the file when last read whole; zero: read it at the next look
	read    []byte          // the token it held then (nil: none accepted); never changed in place
}

func newTokenSource(path, initial string) *tokenSource {
	return &tokenSource{path: path, token: []byte(initial)}
}

// current returns the token to compare against (nil: accept none). The caller must
// not change it.
func (ts *tokenSource) current() []byte {
	if ts.path == "" {
		return ts.token
	}
	st, err := statefile.StampPath(ts.path) // before the read: a change after it moves the stamp
	if err != nil {
		return nil
	}
	ts.mu.Lock()
	if ts.stamp.Unchanged(st) {
		tok := ts.read
		ts.mu.Unlock()
		return tok
	}
	ts.mu.Unlock()
	ts.reading.Lock()
	defer ts.reading.Unlock()
	if st, err = statefile.StampPath(ts.path); err != nil {
		return nil
	}
	var tok []byte
	b, err := statefile.ReadFile(ts.path) // a link, or a file others may read, is refused
	if err == nil {
		if t, perr := parseToken(ts.path, b); perr == nil {
			tok = []byte(t)
		}
	}
	ts.mu.Lock()
	if err == nil {
		ts.stamp, ts.read = st, tok // what the file held at st or later: a later change moves the stamp
	} else {
		ts.stamp, ts.read = statefile.Stamp{}, nil // a failed read is tried again at every look
	}
	ts.mu.Unlock()
	return tok
}
