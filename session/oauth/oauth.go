// Package oauth authorizes airlock with remote MCP servers that have a
// [servers.NAME.oauth] table: go-sdk's OAuth 2.1 authorization-code flow through a
// loopback redirect, and the owner-only token store keyed by issuer.
package oauth

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/airlock-mcp/airlock/session/config"
)

// Options configures how a Manager authorizes with servers that have a
// [servers.NAME.oauth] table (OAuth 2.1: protected resource and authorization
// server metadata discovery, client ID metadata document, pre-registered client or
// dynamic registration, authorization code with PKCE through a loopback redirect,
// RFC 9207 iss check, refresh tokens). Tokens are kept 0600 in the state dir, keyed
// by issuer, and never logged.
type Options struct {
	// OpenBrowser opens the authorization URL for the person. nil runs the system's
	// opener (xdg-open; open on macOS; rundll32 url.dll,FileProtocolHandler on
	// Windows) with the URL as its one argument, never through a shell.
	// An error is reported and the URL stays shown for the person to copy.
	OpenBrowser func(ctx context.Context, url string) error
	// Show, when set, is told the URL too, for a frontend without an event loop
	// (airlock check prints it). The URL is always reported as an
	// AuthorizationRequested event and a log line.
	Show func(server, url string)
	// HTTPClient makes the discovery, registration and token requests; nil uses a
	// client with a 30 s timeout.
	HTTPClient *http.Client
}

// Reporter is told what a handler has to say to the person about its server.
type Reporter interface {
	// AuthorizationRequested: the person must authorize airlock in a browser at url
	// (the authorization server's page: server-influenced text, escape before
	// display); airlock waits for the redirect on a loopback address.
	AuthorizationRequested(url string)
	// Log is a line for the server's log (it may hold the authorization URL).
	Log(text string)
	// Error is a failure that does not stop the flow (a token that could not be
	// saved); it may hold URLs with secrets in them: redact before showing.
	Error(err error)
}

// LoginTimeout is how long connecting may wait for the person to finish
// authorizing in the browser, on top of the connect timeout.
const LoginTimeout = 5 * time.Minute

// redirectPath is the loopback redirect URI's path.
const redirectPath = "/callback"

// Handler is one server's auth.OAuthHandler: go-sdk's authorization code
// handler, started with the stored grant and saving each new or refreshed token.
type Handler struct {
	server   string
	resource string
	cfg      config.OAuth
	store    *Store
	opts     Options
	report   Reporter
	client   *http.Client // go-sdk's requests, through issuerRecorder
	recorder *issuerRecorder
	port     int

	// redirect serves a port airlock picked, from New to Close: the port is in the
	// redirect URI the client registers, so it is kept from any other program until
	// the redirect comes (one closed and listened on again later was taken in
	// between). nil for a configured port, listened on only while authorizing, so
	// two airlock processes with the same redirect_port can both run.
	redirect *http.Server

	inner *auth.AuthorizationCodeHandler
	mu    sync.Mutex // serialises Authorize

	waitMu  sync.Mutex
	waiting *callback // the authorization the redirect listener waits for, or nil
}

var _ auth.OAuthHandler = (*Handler)(nil)

// New builds the handler for one server. The redirect port is fixed by the config,
// and listened on only while a person authorizes, or picked now and held until
// Close.
func New(server, resource string, cfg config.OAuth, store *Store, opts Options, report Reporter) (*Handler, error) {
	h := &Handler{server: server, resource: resource, cfg: cfg, store: store, opts: opts, report: report, port: cfg.RedirectPort}
	base := opts.HTTPClient
	var rt http.RoundTripper
	if base == nil {
		base = &http.Client{Timeout: 30 * time.Second}
		rt = publicOnlyTransport()
	} else if rt = base.Transport; rt == nil {
		rt = http.DefaultTransport
	}
	h.recorder = &issuerRecorder{base: rt}
	c := *base
	c.Transport = h.recorder
	h.client = &c
	if h.port == 0 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("choosing a loopback port for the OAuth redirect: %w", err)
		}
		h.port = ln.Addr().(*net.TCPAddr).Port
		h.redirect = h.redirectServer()
		go h.redirect.Serve(ln)
	}
	redirect := "http://127.0.0.1:" + strconv.Itoa(h.port) + redirectPath

	hc := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: h.fetch,
		RequestRefreshToken:      true,
		Client:                   h.client,
		NewTokenSource:           h.newTokenSource,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName:              "airlock",
				RedirectURIs:            []string{redirect},
				GrantTypes:              []string{"authorization_code", "refresh_token"},
				ResponseTypes:           []string{"code"},
				TokenEndpointAuthMethod: "none",
			},
		},
	}
	if cfg.ClientMetadataURL != "" {
		hc.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: cfg.ClientMetadataURL}
	}
	if cfg.ClientID != "" {
		pre := &oauthex.ClientCredentials{ClientID: cfg.ClientID, Issuer: cfg.Issuer}
		if cfg.ClientSecret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}
		}
		hc.PreregisteredClient = pre
	}
	if len(cfg.Scopes) > 0 {
		scopes := cfg.Scopes
		hc.ScopeFilter = func([]string) []string { return append([]string(nil), scopes...) }
	}
	// A grant kept from an earlier run is used (and refreshed) before anyone is asked.
	if issuer, g, err := store.lookup(resource, cfg.ClientID); err != nil {
		report.Error(err)
	} else if g != nil && (cfg.Issuer == "" || sameIssuer(issuer, cfg.Issuer)) {
		hc.InitialTokenSource = h.persisting(issuer, g.config(), g.token())
	}
	inner, err := auth.NewAuthorizationCodeHandler(hc)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("setting up OAuth: %w", err)
	}
	h.inner = inner
	return h, nil
}

// Close lets go of the redirect port airlock picked; an authorization waiting
// for its redirect then waits in vain until its context ends.
func (h *Handler) Close() error {
	if h.redirect == nil {
		return nil
	}
	return h.redirect.Close()
}

// TokenSource returns the current token source (nil before any authorization).
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return h.inner.TokenSource(ctx)
}

// Authorize runs go-sdk's authorization flow after a 401 or an insufficient_scope
// 403; one at a time per server.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recorder.reset()
	if err := h.inner.Authorize(ctx, req, resp); err != nil {
		return fmt.Errorf("authorizing with OAuth: %w", err)
	}
	return nil
}

// newTokenSource is go-sdk's hook after a code exchange: the token is saved under
// the issuer whose metadata the flow used, and so is every refresh of it.
func (h *Handler) newTokenSource(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	issuer := h.recorder.issuer()
	if issuer == "" { // 2025-03-26 servers without metadata: the token endpoint's origin
		if u, err := url.Parse(cfg.Endpoint.TokenURL); err == nil {
			issuer = u.Scheme + "://" + u.Host
		}
	}
	ts := h.persisting(issuer, cfg, tok)
	h.save(issuer, cfg, tok)
	return ts, nil
}

// persisting returns a token source for tok that refreshes through cfg, with the
// configured HTTP client, and saves each new token.
func (h *Handler) persisting(issuer string, cfg *oauth2.Config, tok *oauth2.Token) oauth2.TokenSource {
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, h.client)
	return &savingSource{inner: cfg.TokenSource(ctx, tok), last: tok.AccessToken, save: func(t *oauth2.Token) { h.save(issuer, cfg, t) }}
}

func (h *Handler) save(issuer string, cfg *oauth2.Config, tok *oauth2.Token) {
	g := &grant{
		ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		TokenURL: cfg.Endpoint.TokenURL, AuthStyle: cfg.Endpoint.AuthStyle, Scopes: cfg.Scopes,
		AccessToken: tok.AccessToken, TokenType: tok.TokenType, RefreshToken: tok.RefreshToken, Expiry: tok.Expiry,
		Saved: time.Now().UTC(),
	}
	if err := h.store.save(issuer, h.resource, g); err != nil {
		h.report.Error(err)
	}
}

// savingSource saves every token its inner source hands out that it has not seen.
type savingSource struct {
	inner oauth2.TokenSource
	save  func(*oauth2.Token)

	mu   sync.Mutex
	last string
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	t, err := s.inner.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	changed := t.AccessToken != s.last
	s.last = t.AccessToken
	s.mu.Unlock()
	if changed {
		s.save(t)
	}
	return t, nil
}

// callback is one authorization waiting for its redirect.
type callback struct {
	state string
	done  chan callbackOutcome // buffered: the first redirect with the state is kept
	once  sync.Once
}

type callbackOutcome struct {
	res *auth.AuthorizationResult
	err error
}

// fetch is the authorization step: listen on the loopback redirect URI (or use the
// port held since New), show the person the URL and open their browser, and wait
// for the authorization server's redirect carrying this request's state.
func (h *Handler) fetch(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	au, err := url.Parse(args.URL)
	if err != nil {
		return nil, fmt.Errorf("the authorization URL does not parse: %w", err)
	}
	cb := &callback{state: au.Query().Get("state"), done: make(chan callbackOutcome, 1)}
	if h.redirect == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(h.port))
		if err != nil {
			return nil, fmt.Errorf("listening for the OAuth redirect on 127.0.0.1:%d: %w", h.port, err)
		}
		srv := h.redirectServer()
		go srv.Serve(ln)
		defer srv.Close()
	}
	h.waitMu.Lock()
	h.waiting = cb
	h.waitMu.Unlock()
	defer func() {
		h.waitMu.Lock()
		h.waiting = nil
		h.waitMu.Unlock()
	}()

	h.announce(ctx, args.URL)
	select {
	case o := <-cb.done:
		return o.res, o.err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the browser to come back to airlock: %w", ctx.Err())
	}
}

// redirectServer answers the loopback redirect URI: the redirect carrying the
// waiting authorization's state ends the wait; anything else (a stale tab, a stray
// request, nothing waiting) is told so and changes nothing.
func (h *Handler) redirectServer() *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+redirectPath, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.waitMu.Lock()
		cb := h.waiting
		h.waitMu.Unlock()
		if cb == nil || cb.state == "" || subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(cb.state)) != 1 {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, callbackPage("This is not the authorization airlock is waiting for."))
			return
		}
		if e := q.Get("error"); e != "" {
			io.WriteString(w, callbackPage("Authorization was not granted. You can close this tab."))
			msg := "the authorization server answered " + strconv.Quote(e)
			if d := q.Get("error_description"); d != "" {
				msg += ": " + strconv.Quote(truncate(d, 200))
			}
			cb.once.Do(func() { cb.done <- callbackOutcome{err: errors.New(msg)} })
			return
		}
		io.WriteString(w, callbackPage("airlock is authorized. You can close this tab."))
		cb.once.Do(func() {
			cb.done <- callbackOutcome{res: &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}}
		})
	})
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
}

func callbackPage(msg string) string {
	return "<!doctype html><meta charset=utf-8><title>airlock</title><p>" + msg + "</p>\n"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// announce tells the person where to authorize and opens their browser.
func (h *Handler) announce(ctx context.Context, authURL string) {
	h.report.AuthorizationRequested(authURL)
	h.report.Log("authorize airlock for this server in your browser; if it does not open, open this URL: " + authURL)
	if h.opts.Show != nil {
		h.opts.Show(h.server, authURL)
	}
	open := h.opts.OpenBrowser
	if open == nil {
		open = openBrowser
	}
	go func() {
		if err := open(ctx, authURL); err != nil {
			h.report.Log("could not open a browser (" + err.Error() + "); open the URL above yourself")
		}
	}()
}

// openBrowser opens u with the system's opener, as its one argument and without a
// shell. Only http(s) URLs without spaces, quotes or control characters are opened
// (a real authorization URL has them percent-encoded), so a hostile authorization
// server cannot hand the opener a file, a command, an option or a second argument.
// The opener is not tied to ctx: it may still be handing the URL to a browser when
// the authorization ends.
func openBrowser(_ context.Context, u string) error {
	if err := openableURL(u); err != nil {
		return err
	}
	name, args := browserCommand(runtime.GOOS, u)
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// openableURL refuses what openBrowser must not hand to an opener.
func openableURL(u string) error {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
		return errors.New("not an http or https URL")
	}
	if i := strings.IndexFunc(u, func(r rune) bool { return r <= ' ' || r == '"' || r == 0x7f }); i >= 0 {
		return errors.New("the URL holds a space, quote or control character")
	}
	return nil
}

// browserCommand is the program and arguments that open u on goos: open on macOS,
// rundll32's URL handler on Windows (the handler a shell's "start" uses, without
// cmd.exe), xdg-open elsewhere. The URL is always one argument of its own.
func browserCommand(goos, u string) (string, []string) {
	switch goos {
	case "darwin":
		return "open", []string{u}
	case "windows":
		return "rundll32", []string{"url.dll,FileProtocolHandler", u}
	}
	return "xdg-open", []string{u}
}

// publicOnlyTransport is the transport of OAuth requests: addresses in private,
// link-local, CGNAT, multicast and unspecified ranges are refused when dialled, so a
// hostile server's metadata cannot point airlock at the local network. (go-sdk
// applies the same rule to its discovery requests when it owns the transport; the
// issuer recorder wraps it, so airlock applies it itself.) Loopback stays allowed,
// for servers on this machine. With a proxy configured the check would only see
// the proxy, so it is left to the proxy.
func publicOnlyTransport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if probe, err := http.NewRequest(http.MethodGet, "https://example.com", nil); err == nil {
		if u, err := http.ProxyFromEnvironment(probe); err == nil && u != nil {
			return t
		}
	}
	t.DialContext = (&net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				host = address
			}
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return fmt.Errorf("OAuth request to a non-IP address %q", host)
			}
			if nonPublic(ip) {
				return fmt.Errorf("OAuth request to a non-public address %s refused", ip)
			}
			return nil
		},
	}).DialContext
	return t
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

func nonPublic(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !ip.IsValid() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.IsUnspecified() || cgnat.Contains(ip)
}

// issuerRecorder notes the issuer of the authorization server metadata go-sdk
// fetches during a flow, so the token is stored under the issuer that issued it.
type issuerRecorder struct {
	base http.RoundTripper

	mu   sync.Mutex
	last string
}

func (r *issuerRecorder) reset() {
	r.mu.Lock()
	r.last = ""
	r.mu.Unlock()
}

func (r *issuerRecorder) issuer() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

func (r *issuerRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	p := req.URL.Path
	if !strings.Contains(p, "/.well-known/oauth-authorization-server") && !strings.Contains(p, "/.well-known/openid-configuration") {
		return resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var meta struct {
		Issuer string `json:"issuer"`
	}
	if json.Unmarshal(body, &meta) == nil && meta.Issuer != "" {
		r.mu.Lock()
		r.last = meta.Issuer
		r.mu.Unlock()
	}
	return resp, nil
}

// sameIssuer compares issuers ignoring one trailing slash (RFC 8414 3.3 tolerance).
func sameIssuer(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}
