package session_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/oauth"
	"github.com/airlock-mcp/airlock/trust"
)

// authServer is a small OAuth 2.1 authorization server on 127.0.0.1: RFC 8414
// metadata, dynamic registration (when dcr), authorization code with PKCE S256 only,
// RFC 9207 iss in the redirect, refresh tokens.
type authServer struct {
	t   *testing.T
	srv *httptest.Server

	dcr      bool              // offer a registration endpoint
	clients  map[string]string // pre-registered client id -> secret ("" public)
	wrongIss bool              // answer with another issuer's iss
	lifetime time.Duration     // access token lifetime

	mu         sync.Mutex
	codes      map[string]authCode
	tokens     map[string]time.Time // access token -> expiry
	refreshes  map[string]string    // refresh token -> client id
	grants     []string             // grant_type of every token request
	last       string               // the last refresh token issued
	authorizes int
	registered int
	seq        int
}

type authCode struct {
	client, redirect, challenge, resource string
}

func newAuthServer(t *testing.T) *authServer {
	a := &authServer{t: t, dcr: true, clients: map[string]string{}, lifetime: time.Hour,
		codes: map[string]authCode{}, tokens: map[string]time.Time{}, refreshes: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", a.metadata)
	mux.HandleFunc("POST /register", a.register)
	mux.HandleFunc("GET /authorize", a.authorize)
	mux.HandleFunc("POST /token", a.token)
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *authServer) metadata(w http.ResponseWriter, r *http.Request) {
	m := map[string]any{
		"issuer":                                         a.srv.URL,
		"authorization_endpoint":                         a.srv.URL + "/authorize",
		"token_endpoint":                                 a.srv.URL + "/token",
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"client_secret_post", "none"},
		"scopes_supported":                               []string{"mcp", "offline_access"},
		"authorization_response_iss_parameter_supported": true,
	}
	if a.dcr {
		m["registration_endpoint"] = a.srv.URL + "/register"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(m)
}

func (a *authServer) register(w http.ResponseWriter, r *http.Request) {
	var meta struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	json.NewDecoder(r.Body).Decode(&meta)
	a.mu.Lock()
	a.registered++
	id := fmt.Sprintf("dyn-%d", a.registered)
	a.clients[id] = ""
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(map[string]any{"client_id": id, "redirect_uris": meta.RedirectURIs, "token_endpoint_auth_method": "none"})
}

func (a *authServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.authorizes++
	redirect, err := url.Parse(q.Get("redirect_uri"))
	_, known := a.clients[q.Get("client_id")]
	switch {
	case q.Get("response_type") != "code", q.Get("code_challenge_method") != "S256", q.Get("code_challenge") == "":
		http.Error(w, "want response_type=code and a S256 code_challenge", http.StatusBadRequest)
		return
	case err != nil || redirect.Scheme != "http" || redirect.Hostname() != "127.0.0.1" || redirect.Path != "/callback":
		http.Error(w, "want a loopback redirect_uri", http.StatusBadRequest)
		return
	case !known:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	}
	a.seq++
	code := fmt.Sprintf("code-%d", a.seq)
	a.codes[code] = authCode{client: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), resource: q.Get("resource")}
	back := redirect.Query()
	back.Set("code", code)
	back.Set("state", q.Get("state"))
	if a.wrongIss {
		back.Set("iss", "https://evil.example.com")
	} else {
		back.Set("iss", a.srv.URL)
	}
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (a *authServer) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	a.mu.Lock()
	defer a.mu.Unlock()
	grant := r.PostForm.Get("grant_type")
	a.grants = append(a.grants, grant)
	client := r.PostForm.Get("client_id")
	fail := func(code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"error": code})
	}
	if secret, ok := a.clients[client]; !ok || secret != r.PostForm.Get("client_secret") {
		fail("invalid_client")
		return
	}
	switch grant {
	case "authorization_code":
		c, ok := a.codes[r.PostForm.Get("code")]
		delete(a.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || c.client != client || c.redirect != r.PostForm.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge || c.resource != r.PostForm.Get("resource") {
			fail("invalid_grant")
			return
		}
	case "refresh_token":
		if a.refreshes[r.PostForm.Get("refresh_token")] != client {
			fail("invalid_grant")
			return
		}
		delete(a.refreshes, r.PostForm.Get("refresh_token"))
	default:
		fail("unsupported_grant_type")
		return
	}
	a.seq++
	access, refresh := fmt.Sprintf("secret-access-%d", a.seq), fmt.Sprintf("secret-refresh-%d", a.seq)
	a.tokens[access] = time.Now().Add(a.lifetime)
	a.refreshes[refresh] = client
	a.last = refresh
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"access_token": access, "token_type": "Bearer", "refresh_token": refresh,
		"expires_in": int(a.lifetime / time.Second), "scope": "mcp offline_access",
	})
}

func (a *authServer) valid(token string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.tokens[token]
	return ok && time.Now().Before(exp)
}

func (a *authServer) seen() (authorizes, registered int, grants []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.authorizes, a.registered, append([]string(nil), a.grants...)
}

// protectedServer is an MCP server on 127.0.0.1 whose /mcp wants a bearer token
// from as, with RFC 9728 protected resource metadata naming as.
func protectedServer(t *testing.T, as *authServer) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "protected"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "whoami"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "authorized"}}}, nil, nil
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"resource": base + "/mcp", "authorization_servers": []string{as.srv.URL}, "scopes_supported": []string{"mcp"}})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !as.valid(tok) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp", scope="mcp"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	base = srv.URL
	return srv.URL + "/mcp"
}

// browser plays the person's browser: it loads the authorization URL and follows
// the redirect to airlock's loopback listener. It records every URL it was given.
type browser struct {
	mu   sync.Mutex
	urls []string
	// stray, when set, first sends the listener a redirect with a wrong state.
	stray bool
}

func (b *browser) open(ctx context.Context, u string) error {
	b.mu.Lock()
	b.urls = append(b.urls, u)
	stray := b.stray
	b.mu.Unlock()
	if stray {
		au, _ := url.Parse(u)
		redirect := au.Query().Get("redirect_uri")
		resp, err := http.Get(redirect + "?code=forged&state=not-the-state")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			return fmt.Errorf("a redirect with the wrong state got %d, want 400", resp.StatusCode)
		}
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil
}

func (b *browser) opened() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.urls...)
}

func oauthConfig(url, stateDir string, o *config.OAuth) *config.Config {
	cfg := sessiontest.NewConfig(config.Server{
		Name: "remote", Transport: config.TransportHTTP, URL: url, OAuth: o,
		ConnectTimeout: 20 * time.Second, CallTimeout: 20 * time.Second, Trust: trust.Untrusted,
	})
	cfg.StateDir = stateDir
	return cfg
}

// collect keeps the Manager's events for later inspection.
func collect(t *testing.T, m *session.Manager) func() []model.Event {
	var mu sync.Mutex
	var evs []model.Event
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for {
			ev, ok := m.Next(ctx)
			if !ok {
				return
			}
			mu.Lock()
			evs = append(evs, ev)
			mu.Unlock()
		}
	}()
	return func() []model.Event {
		mu.Lock()
		defer mu.Unlock()
		return append([]model.Event(nil), evs...)
	}
}

func startOAuth(t *testing.T, cfg *config.Config, b *browser) (*session.Manager, func() []model.Event) {
	t.Helper()
	m := session.New(cfg, session.Options{Approver: allowAll(nil), OAuth: oauth.Options{OpenBrowser: b.open}})
	t.Cleanup(func() { m.Close() })
	events := collect(t, m)
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return m, events
}

func callWhoami(t *testing.T, m *session.Manager) {
	t.Helper()
	out, err := m.Call(context.Background(), model.CallRequest{Server: "remote", Tool: "whoami"})
	if err != nil {
		t.Fatalf("calling whoami: %v", err)
	}
	if got := sessiontest.TextOf(out.Result); got != "authorized" {
		t.Fatalf("whoami = %q", got)
	}
}

// A server that wants OAuth is authorized through discovery, dynamic registration
// and the authorization code flow with PKCE, the redirect arriving at airlock's
// loopback listener; the token is stored 0600 under the issuer and never shown; a
// second run uses the stored token without asking anyone.
func TestOAuthAuthorizationCodeFlow(t *testing.T) {
	as := newAuthServer(t)
	url := protectedServer(t, as)
	state := t.TempDir()
	b := &browser{stray: true}
	m, events := startOAuth(t, oauthConfig(url, state, &config.OAuth{}), b)
	sessiontest.MustServer(t, m, "remote", model.StatusReady)
	callWhoami(t, m)

	authorizes, registered, grants := as.seen()
	if authorizes != 1 || registered != 1 || len(grants) != 1 || grants[0] != "authorization_code" {
		t.Errorf("authorization server saw %d authorizations, %d registrations, grants %v; want 1, 1, [authorization_code]", authorizes, registered, grants)
	}
	opened := b.opened()
	if len(opened) != 1 || !strings.HasPrefix(opened[0], as.srv.URL+"/authorize?") {
		t.Fatalf("browser opened %q", opened)
	}
	var announced bool
	for _, ev := range events() {
		switch e := ev.(type) {
		case model.AuthorizationRequested:
			announced = e.Server == "remote" && e.URL == opened[0]
		case model.LogLine:
			if strings.Contains(e.Text, "secret-") {
				t.Errorf("a token reached a log line: %q", e.Text)
			}
		}
	}
	if !announced {
		t.Errorf("no AuthorizationRequested event with the URL")
	}

	path := filepath.Join(state, "oauth-tokens.json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token store mode %v, want 0600", fi.Mode().Perm())
	}
	var stored struct {
		Issuers map[string]map[string]struct {
			ClientID     string `json:"client_id"`
			AccessToken  string `json:"access_token"`
			RefreshToken string `json:"refresh_token"`
		} `json:"issuers"`
	}
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &stored); err != nil {
		t.Fatal(err)
	}
	g, ok := stored.Issuers[as.srv.URL][url]
	if !ok || g.ClientID != "dyn-1" || !strings.HasPrefix(g.AccessToken, "secret-access-") || !strings.HasPrefix(g.RefreshToken, "secret-refresh-") {
		t.Errorf("store holds %s", data)
	}
	m.Close()

	// A new run finds the token and asks nobody.
	b2 := &browser{}
	m2, _ := startOAuth(t, oauthConfig(url, state, &config.OAuth{}), b2)
	sessiontest.MustServer(t, m2, "remote", model.StatusReady)
	callWhoami(t, m2)
	if len(b2.opened()) != 0 {
		t.Errorf("the second run opened the browser: %q", b2.opened())
	}
	if a, r, _ := as.seen(); a != 1 || r != 1 {
		t.Errorf("the second run authorized again (%d authorizations, %d registrations)", a, r)
	}
}

// An expired access token is refreshed with the refresh token, and the refreshed
// token is what is stored, so the next run starts from it.
func TestOAuthRefresh(t *testing.T) {
	as := newAuthServer(t)
	as.lifetime = 2 * time.Second // under oauth2's 10 s margin: every use refreshes
	url := protectedServer(t, as)
	state := t.TempDir()
	m, _ := startOAuth(t, oauthConfig(url, state, &config.OAuth{}), &browser{})
	sessiontest.MustServer(t, m, "remote", model.StatusReady)
	callWhoami(t, m)
	_, _, grants := as.seen()
	if len(grants) < 2 || grants[0] != "authorization_code" || grants[1] != "refresh_token" {
		t.Fatalf("grants %v, want an authorization_code then refresh_token", grants)
	}
	data, _ := os.ReadFile(filepath.Join(state, "oauth-tokens.json"))
	as.mu.Lock()
	want := as.last
	as.mu.Unlock()
	if !strings.Contains(string(data), `"refresh_token": "`+want+`"`) {
		t.Errorf("store does not hold the latest refresh token %s:\n%s", want, data)
	}
	m.Close()

	b := &browser{}
	m2, _ := startOAuth(t, oauthConfig(url, state, &config.OAuth{}), b)
	sessiontest.MustServer(t, m2, "remote", model.StatusReady)
	if len(b.opened()) != 0 {
		t.Errorf("a stored refresh token should have spared the person: browser opened %q", b.opened())
	}
}

// A pre-registered confidential client sends its secret to the token endpoint, and
// needs no registration endpoint.
func TestOAuthPreregisteredClient(t *testing.T) {
	as := newAuthServer(t)
	as.dcr = false
	as.clients["airlock-test"] = "client-secret-1"
	url := protectedServer(t, as)
	m, _ := startOAuth(t, oauthConfig(url, t.TempDir(), &config.OAuth{
		ClientID: "airlock-test", ClientSecret: "client-secret-1", Issuer: as.srv.URL, Scopes: []string{"mcp"},
	}), &browser{})
	sessiontest.MustServer(t, m, "remote", model.StatusReady)
	callWhoami(t, m)
	if _, r, _ := as.seen(); r != 0 {
		t.Errorf("registered %d clients, want none", r)
	}

	// The same client bound to another issuer is refused before any secret is sent.
	as2 := newAuthServer(t)
	as2.dcr = false
	as2.clients["airlock-test"] = "client-secret-1"
	url2 := protectedServer(t, as2)
	m2, _ := startOAuth(t, oauthConfig(url2, t.TempDir(), &config.OAuth{
		ClientID: "airlock-test", ClientSecret: "client-secret-1", Issuer: "https://auth.example.com",
	}), &browser{})
	sv := sessiontest.MustServer(t, m2, "remote", model.StatusFailed)
	if !strings.Contains(sv.Err.Error(), "does not match pre-registered credentials issuer") {
		t.Errorf("err = %v", sv.Err)
	}
	if _, _, grants := as2.seen(); len(grants) != 0 {
		t.Errorf("token requests went to the wrong issuer: %v", grants)
	}
}

// An authorization response whose iss is not the authorization server's (RFC 9207,
// a mix-up attack) is refused: no token is requested or stored.
func TestOAuthWrongIssuer(t *testing.T) {
	as := newAuthServer(t)
	as.wrongIss = true
	url := protectedServer(t, as)
	state := t.TempDir()
	m, _ := startOAuth(t, oauthConfig(url, state, &config.OAuth{}), &browser{})
	sv := sessiontest.MustServer(t, m, "remote", model.StatusFailed)
	if !strings.Contains(sv.Err.Error(), `issuer "https://evil.example.com" does not match`) {
		t.Errorf("err = %v", sv.Err)
	}
	if _, _, grants := as.seen(); len(grants) != 0 {
		t.Errorf("token requested after a wrong iss: %v", grants)
	}
	if _, err := os.Stat(filepath.Join(state, "oauth-tokens.json")); err == nil {
		t.Errorf("a token store was written")
	}
}

// A server that asks for a bearer token, without an oauth table, fails with a hint.
func TestOAuthMissingTableHint(t *testing.T) {
	as := newAuthServer(t)
	url := protectedServer(t, as)
	cfg := oauthConfig(url, t.TempDir(), nil)
	m := sessiontest.Start(t, cfg, session.Options{})
	sv := sessiontest.MustServer(t, m, "remote", model.StatusFailed)
	if !strings.Contains(sv.Err.Error(), "add a [servers.remote.oauth] table") {
		t.Errorf("err = %v", sv.Err)
	}
	if a, _, _ := as.seen(); a != 0 {
		t.Errorf("authorized without an oauth table")
	}
}
