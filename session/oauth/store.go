package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/airlock-mcp/airlock/session/statefile"
)

// StoreFile is the token store's name in the state dir.
const StoreFile = "oauth-tokens.json"

// grant is what airlock keeps of one authorization: the token, and the client
// and token endpoint it was issued to, which a refresh needs. It holds secrets: it is
// only ever written to the 0600 store, never logged, never shown.
type grant struct {
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style"`
	Scopes       []string         `json:"scopes,omitempty"`
	AccessToken  string           `json:"access_token"`
	TokenType    string           `json:"token_type,omitempty"`
	RefreshToken string           `json:"refresh_token,omitempty"`
	Expiry       time.Time        `json:"expiry,omitzero"`
	Saved        time.Time        `json:"saved"`
}

// Format prints the grant without its secrets, whatever the verb.
func (g grant) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "oauth grant for client %q at %s", g.ClientID, g.TokenURL)
}

func (g *grant) token() *oauth2.Token {
	return &oauth2.Token{AccessToken: g.AccessToken, TokenType: g.TokenType, RefreshToken: g.RefreshToken, Expiry: g.Expiry}
}

func (g *grant) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     g.ClientID,
		ClientSecret: g.ClientSecret,
		Endpoint:     oauth2.Endpoint{TokenURL: g.TokenURL, AuthStyle: g.AuthStyle},
		Scopes:       g.Scopes,
	}
}

// tokenFile is the store's JSON: grants keyed by issuer (the authorization server
// that issued them), then by resource (the MCP server's URL they are for). Keying by
// issuer keeps one authorization server's token from ever being offered for
// another's: a server whose authorization server changes gets a new authorization.
type tokenFile struct {
	Version int                          `json:"version"`
	Issuers map[string]map[string]*grant `json:"issuers"`
}

// Store keeps OAuth grants in the state dir, 0600, written atomically; with no
// path it keeps them in memory for this run. It is safe for concurrent use.
type Store struct {
	path string

	mu  sync.Mutex
	mem tokenFile // used when path is ""
}

// NewStore is the store in stateDir ("" keeps grants in memory for this run).
func NewStore(stateDir string) *Store {
	s := &Store{mem: tokenFile{Version: 1, Issuers: map[string]map[string]*grant{}}}
	if stateDir != "" {
		s.path = filepath.Join(stateDir, StoreFile)
	}
	return s
}

func (s *Store) read() (tokenFile, error) {
	if s.path == "" {
		return s.mem, nil
	}
	f := tokenFile{Version: 1, Issuers: map[string]map[string]*grant{}}
	b, err := statefile.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("reading the OAuth token store: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("reading the OAuth token store %s: %w", s.path, err)
	}
	if f.Issuers == nil {
		f.Issuers = map[string]map[string]*grant{}
	}
	return f, nil
}

// lookup finds the grant for resource, issued to clientID when that is not "".
func (s *Store) lookup(resource, clientID string) (issuer string, g *grant, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.read()
	if err != nil {
		return "", nil, err
	}
	var best *grant
	for iss, grants := range f.Issuers {
		if g := grants[resource]; g != nil && (clientID == "" || g.ClientID == clientID) && (best == nil || g.Saved.After(best.Saved)) {
			issuer, best = iss, g
		}
	}
	return issuer, best, nil
}

// save stores g as the grant issuer issued for resource, replacing any grant another
// issuer holds for it.
func (s *Store) save(issuer, resource string, g *grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.read()
	if err != nil && s.path != "" {
		if statefile.Refused(err) {
			// A link, another user's file or one others may read is left for the
			// person to deal with (the error says how); the token lives in memory
			// for this run.
			return fmt.Errorf("saving the OAuth token: %w", err)
		}
		// An unreadable store is replaced rather than blocking authorization forever.
		f = tokenFile{Version: 1, Issuers: map[string]map[string]*grant{}}
	}
	for iss, grants := range f.Issuers {
		delete(grants, resource)
		if len(grants) == 0 {
			delete(f.Issuers, iss)
		}
	}
	if f.Issuers[issuer] == nil {
		f.Issuers[issuer] = map[string]*grant{}
	}
	f.Issuers[issuer][resource] = g
	if s.path == "" {
		s.mem = f
		return nil
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := statefile.WriteFile(s.path, b); err != nil {
		return fmt.Errorf("saving the OAuth token: %w", err)
	}
	return nil
}
