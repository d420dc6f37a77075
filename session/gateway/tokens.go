package gateway

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/airlock-mcp/airlock/session/statefile"
)

// Named agent tokens: each agent (or group of agents the person treats as one) gets
// its own token, and the token is who the agent is: its taint and grant context
// (AgentContext) is the token's name, whatever client name it gives. The tokens file
// keeps only each token's name, the SHA-256 of its value and when it was added, so a
// copy of the state dir does not hand out the tokens; the value is shown once, by
// `airlock gateway token add`. The default token (gateway.token) is the token named
// DefaultTokenName.

// DefaultTokenName is the name of the default token (gateway.token): its agents'
// context is AgentContext(DefaultTokenName).
const DefaultTokenName = "default"

// TokensPath is where the named agent tokens of a state dir are kept.
func TokensPath(dir string) string { return filepath.Join(dir, "gateway-tokens.json") }

// validTokenName reports whether name is ^[a-z0-9][a-z0-9_-]{0,31}$ (checked by hand:
// a regexp compiled at start costs every command its allocations).
func validTokenName(name string) bool {
	if len(name) == 0 || len(name) > 32 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// ErrTokenExists is AddToken's error when the name is taken.
var ErrTokenExists = errors.New("a token of that name exists")

// ErrNoSuchToken is RevokeToken's error when no token has the name.
var ErrNoSuchToken = errors.New("no token has that name")

// CheckTokenName says why name cannot name a token (nil when it can): 1 to 32 of
// a-z, 0-9, '_' and '-', starting with a letter or digit; "default" is the default
// token's.
func CheckTokenName(name string) error {
	if !validTokenName(name) {
		return fmt.Errorf("token name %q: use 1 to 32 of a-z, 0-9, _ and -, starting with a letter or digit", name)
	}
	if name == DefaultTokenName {
		return fmt.Errorf("token name %q is the default token's (gateway.token; `airlock gateway rotate-token` replaces it)", name)
	}
	return nil
}

// NamedToken is one named agent token as the tokens file keeps it: never its value.
type NamedToken struct {
	Name string `json:"name"`
	// SHA256 is the lowercase hex SHA-256 of the token's value.
	SHA256  string    `json:"sha256"`
	Created time.Time `json:"created"`
}

type tokensDoc struct {
	Version int          `json:"version"`
	Tokens  []NamedToken `json:"tokens"`
}

// parseTokens reads a tokens file strictly: version 1, known fields only, valid and
// distinct names, distinct 64-hex-digit hashes (one value under two names would be
// either of them, by the file's order). Anything else is an error, never "no tokens".
func parseTokens(path string, b []byte) ([]NamedToken, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var d tokensDoc
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%s cannot be read as airlock's tokens file: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s cannot be read as airlock's tokens file: more than one JSON value", path)
	}
	if d.Version != 1 {
		return nil, fmt.Errorf("%s has version %d; this airlock reads version 1", path, d.Version)
	}
	names, hashes := map[string]bool{}, map[string]string{}
	for i, t := range d.Tokens {
		if err := CheckTokenName(t.Name); err != nil {
			return nil, fmt.Errorf("%s: token %d: %w", path, i+1, err)
		}
		if names[t.Name] {
			return nil, fmt.Errorf("%s: token %q is listed twice", path, t.Name)
		}
		names[t.Name] = true
		if len(t.SHA256) != 64 || hex.EncodeToString(mustHex(t.SHA256)) != t.SHA256 {
			return nil, fmt.Errorf("%s: token %q: sha256 is not 64 lowercase hex digits", path, t.Name)
		}
		if other, dup := hashes[t.SHA256]; dup {
			return nil, fmt.Errorf("%s: tokens %q and %q have the same sha256 (one value cannot be two agents)", path, other, t.Name)
		}
		hashes[t.SHA256] = t.Name
	}
	return d.Tokens, nil
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil
	}
	return b
}

// readTokens is the tokens of dir's file; a missing file holds none.
func readTokens(path string) ([]NamedToken, error) {
	b, err := statefile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading agent tokens: %w", err)
	}
	return parseTokens(path, b)
}

// tokenSum is the SHA-256 of a token's value, as the tokens file keeps it and as a
// session remembers the token that opened it.
func tokenSum(tok []byte) [32]byte { return sha256.Sum256(tok) }

// ListTokens lists the named agent tokens kept in dir, by name. A missing file
// holds none; a file that cannot be read or parsed is an error.
func ListTokens(dir string) ([]NamedToken, error) {
	ts, err := readTokens(TokensPath(dir))
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	return ts, err
}

// updateTokens applies change to the tokens file of dir under its lock
// (gateway-tokens.json.lock) and writes the result atomically, owner-only.
func updateTokens(dir string, change func([]NamedToken) ([]NamedToken, error)) error {
	path := TokensPath(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	lf, err := statefile.OpenLock(path + ".lock")
	if err != nil {
		return fmt.Errorf("locking agent tokens: %w", err)
	}
	defer lf.Close()
	if err := statefile.Lock(lf); err != nil {
		return fmt.Errorf("locking agent tokens: %w", err)
	}
	defer statefile.Unlock(lf)
	ts, err := readTokens(path)
	if err != nil {
		return err // a file that cannot be read is never overwritten as if empty
	}
	ts, err = change(ts)
	if err != nil {
		return err
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	b, err := json.MarshalIndent(tokensDoc{Version: 1, Tokens: append([]NamedToken{}, ts...)}, "", "  ")
	if err != nil {
		return err
	}
	if err := statefile.WriteFile(path, append(b, '\n')); err != nil {
		return fmt.Errorf("storing agent tokens: %w", err)
	}
	return nil
}

// AddToken adds a named agent token to dir and returns its value (256 random bits,
// 64 hex digits), which is kept nowhere: only its SHA-256 is written. A name in use
// is refused (ErrTokenExists). A running gateway accepts it from its next request.
func AddToken(dir, name string, now time.Time) (string, error) {
	if err := CheckTokenName(name); err != nil {
		return "", err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(raw[:])
	sum := sha256.Sum256([]byte(tok))
	err := updateTokens(dir, func(ts []NamedToken) ([]NamedToken, error) {
		for _, t := range ts {
			if t.Name == name {
				return nil, fmt.Errorf("token %q: %w (revoke it first to replace it)", name, ErrTokenExists)
			}
		}
		return append(ts, NamedToken{Name: name, SHA256: hex.EncodeToString(sum[:]), Created: now.UTC().Truncate(time.Second)}), nil
	})
	if err != nil {
		return "", err
	}
	return tok, nil
}

// RevokeToken removes the named agent token from dir (ErrNoSuchToken when there is
// none). A running gateway refuses it from its next request and, within a second,
// ends its sessions and withdraws their waiting questions.
func RevokeToken(dir, name string) error {
	return updateTokens(dir, func(ts []NamedToken) ([]NamedToken, error) {
		for i, t := range ts {
			if t.Name == name {
				return append(ts[:i:i], ts[i+1:]...), nil
			}
		}
		return nil, fmt.Errorf("token %q: %w", name, ErrNoSuchToken)
	})
}

// namedTokens is the named tokens a gateway accepts, following the tokens file:
// each look reads it again (it is small) and takes it afresh when its bytes changed
// (another process added or revoked a token). The bytes are compared, not the file's
// stat: a revoke and an add within one tick of a coarse clock leave the size and the
// time as they were. A file that cannot be read or parsed accepts no named token at
// all until it is fixed (problem says why); a missing file holds none.
type namedTokens struct {
	path string

	// reading is held while the file is read and what it holds applied, so that
	// reads are applied in the order they were made: a read begun before a revoke
	// never lands after one begun after it.
	reading sync.Mutex
	mu      sync.Mutex
	looked  bool
	seen    [32]byte        // SHA-256 of what the last look found: the bytes, or why none
	stamp   statefile.Stamp // the file when seen was last read from it; zero: read at the next look
	missing bool            // the last look found no file
	byHash  map[[32]byte]string
	problem error
}

func newNamedTokens(path string) *namedTokens { return &namedTokens{path: path} }

// refresh reads the file again, unless a stat vouches that it did not change since
// the last read (statefile.Stamp) or finds it still missing, and reports whether
// what it accepts may have changed.
func (n *namedTokens) refresh() bool {
	if n == nil || n.path == "" {
		return false
	}
	st, serr := statefile.StampPath(n.path) // before the read: a change after it moves the stamp
	n.mu.Lock()
	unchanged := n.looked && (serr == nil && n.stamp.Unchanged(st) || errors.Is(serr, fs.ErrNotExist) && n.missing)
	n.mu.Unlock()
	if unchanged {
		return false
	}
	n.reading.Lock()
	defer n.reading.Unlock()
	st, serr = statefile.StampPath(n.path)
	b, err := statefile.ReadFile(n.path)
	var seen [32]byte
	switch {
	case err == nil:
		seen = sha256.Sum256(append([]byte("bytes\x00"), b...))
	case errors.Is(err, fs.ErrNotExist):
		seen = sha256.Sum256([]byte("missing"))
	default:
		seen = sha256.Sum256([]byte("error\x00" + err.Error()))
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.stamp, n.missing = statefile.Stamp{}, errors.Is(err, fs.ErrNotExist)
	if err == nil && serr == nil {
		n.stamp = st // the bytes read are the file at st or later: a later change moves the stamp
	}
	if n.looked && seen == n.seen {
		return false
	}
	n.looked, n.seen = true, seen
	var ts []NamedToken
	switch {
	case errors.Is(err, fs.ErrNotExist):
		n.byHash, n.problem = nil, nil
		return true
	case err != nil:
		n.byHash, n.problem = nil, fmt.Errorf("reading agent tokens: %w", err)
		return true
	}
	if ts, err = parseTokens(n.path, b); err != nil {
		n.byHash, n.problem = nil, err
		return true
	}
	n.problem = nil
	n.byHash = make(map[[32]byte]string, len(ts))
	for _, t := range ts {
		var h [32]byte
		copy(h[:], mustHex(t.SHA256))
		n.byHash[h] = t.Name
	}
	return true
}

// lookup is the name of the named token tok, if the file holds it now.
func (n *namedTokens) lookup(tok []byte) (string, bool) {
	if n == nil {
		return "", false
	}
	sum := sha256.Sum256(tok)
	n.mu.Lock()
	defer n.mu.Unlock()
	name, found := "", false
	for h, nm := range n.byHash { // every entry compared, in constant time each
		if subtle.ConstantTimeCompare(h[:], sum[:]) == 1 {
			name, found = nm, true
		}
	}
	return name, found
}

// live reports whether the named token name, whose value has the SHA-256 sum, is
// accepted now: a token revoked and added again under its name is another value.
func (n *namedTokens) live(name string, sum [32]byte) bool {
	if n == nil {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	nm, ok := n.byHash[sum]
	return ok && nm == name
}

// current is the SHA-256 of each named token's value the file holds now, by name.
func (n *namedTokens) current() map[string][32]byte {
	out := map[string][32]byte{}
	if n == nil {
		return out
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for h, nm := range n.byHash {
		out[nm] = h
	}
	return out
}

// Problem says why named tokens are refused now (nil when the file reads).
func (n *namedTokens) Problem() error {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.problem
}
