package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/airlock-mcp/airlock/trust"
)

// namePattern is what a server name must match: it is part of SERVER__TOOL gateway
// names, so it cannot hold "__".
const namePattern = `^[a-z0-9][a-z0-9-]{0,31}$`

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(namePattern) })

func validName(s string) bool { return nameRE().MatchString(s) }

// protocolVersions are the MCP protocol versions a server's protocol key may pin.
var protocolVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// Validate reports every problem in c, such as a config built in code, each an
// *Error naming its key path (as in the file: servers.web.trust), joined with
// errors.Join; nil when c is valid. Parse and Load validate what they return.
func (c *Config) Validate() error {
	p := c.problems()
	p.sort()
	return p.err()
}

func (c *Config) problems() problems {
	var p problems
	for _, a := range []struct {
		key string
		a   trust.Action
	}{{"read", c.Policy.Read}, {"write", c.Policy.Write}, {"destructive", c.Policy.Destructive}} {
		if a.a != trust.Allow && a.a != trust.Ask && a.a != trust.Deny {
			p.add(toml.Key{"policy", a.key}, "want allow|ask|deny, got %q", a.a.String())
		}
	}
	positive(&p, toml.Key{"policy", "approval_timeout"}, c.ApprovalTimeout)
	if g := c.Gateway; g != nil && g.Listen != "" {
		checkListen(&p, g)
	}
	absolute(&p, toml.Key{"state_dir"}, c.StateDir)
	absolute(&p, toml.Key{"audit", "path"}, c.AuditPath)
	absolute(&p, toml.Key{"rules_file"}, c.RulesFile)

	seen := make(map[string]bool, len(c.Servers))
	for i := range c.Servers {
		s := &c.Servers[i]
		if seen[s.Name] {
			p.add(toml.Key{"servers", s.Name}, "duplicate server name")
		}
		seen[s.Name] = true
		s.problems(&p)
	}
	return p
}

func positive(p *problems, k toml.Key, d time.Duration) {
	if d <= 0 {
		p.add(k, "want a positive duration, got %q", d.String())
	}
}

func absolute(p *problems, k toml.Key, path string) {
	if path != "" && !isAbs(path) {
		p.add(k, "want an absolute path, got %q", path)
	}
}

func checkListen(p *problems, g *Gateway) {
	k := toml.Key{"gateway", "listen"}
	host, port, err := net.SplitHostPort(g.Listen)
	if err != nil {
		p.add(k, "want host:port, got %q", g.Listen)
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		p.add(k, "want a port from 0 to 65535, got %q", port)
	}
	if g.AllowRemote {
		return
	}
	if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
		p.add(k, "host %q is not loopback (127.x.x.x, ::1 or localhost); set gateway.allow_remote = true to listen on it", host)
	}
}

func (s *Server) problems(p *problems) {
	k := toml.Key{"servers", s.Name}
	at := func(key ...string) toml.Key { return append(slices.Clip(k), key...) }
	if !validName(s.Name) {
		p.add(k, "server name must match %s", namePattern)
	}
	for i, r := range s.Roots {
		if !isAbs(r) {
			p.addAt(at("roots"), i, "want an absolute path, got %q", r)
		}
	}

	hasCmd, hasURL := s.Command != "", s.URL != ""
	validTransport := s.Transport == TransportStdio || s.Transport == TransportHTTP || s.Transport == TransportSSE
	switch {
	case hasCmd && hasURL:
		p.add(k, "set command or url, not both")
	case !hasCmd && !hasURL:
		p.add(k, "set command (stdio) or url (http, sse)")
	}
	if !validTransport && (s.Transport != "" || hasCmd != hasURL) {
		p.add(at("transport"), "want stdio|http|sse, got %q", string(s.Transport))
	}
	if validTransport && hasCmd != hasURL {
		stdio := s.Transport == TransportStdio
		switch {
		case stdio && hasURL:
			p.add(at("transport"), "stdio needs command, not url")
		case !stdio && hasCmd:
			p.add(at("transport"), "%s needs url, not command", s.Transport)
		case stdio:
			if len(s.Headers) > 0 {
				p.add(at("headers"), "only for http and sse servers (url)")
			}
		default:
			if len(s.Args) > 0 {
				p.add(at("args"), "only for stdio servers (command)")
			}
			if len(s.Env) > 0 {
				p.add(at("env"), "only for stdio servers (command)")
			}
			if s.Cwd != "" {
				p.add(at("cwd"), "only for stdio servers (command)")
			}
			if len(s.InheritEnv) > 0 {
				p.add(at("inherit_env"), "only for stdio servers (command)")
			}
		}
	}

	if hasURL {
		checkURL(p, at("url"), s.URL)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Headers)) {
		hk := at("headers", name)
		if !validHeaderName(name) {
			p.add(hk, "invalid header name")
		}
		if s.OAuth != nil && strings.EqualFold(name, "Authorization") {
			p.add(hk, "OAuth sets the Authorization header: remove it, or the [servers.%s.oauth] table", s.Name)
		}
		if strings.ContainsFunc(s.Headers[name], func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			p.add(hk, "header value has a control character")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Env)) {
		ek := at("env", name)
		if name == "" || strings.ContainsAny(name, "=\x00") {
			p.add(ek, "invalid environment variable name")
		}
		if strings.ContainsRune(s.Env[name], 0) {
			p.add(ek, "value has a NUL byte")
		}
	}
	if s.Protocol != "" && !slices.Contains(protocolVersions, s.Protocol) {
		p.add(at("protocol"), `want "" or one of %s, got %q`, strings.Join(protocolVersions, "|"), s.Protocol)
	}
	positive(p, at("connect_timeout"), s.ConnectTimeout)
	positive(p, at("call_timeout"), s.CallTimeout)
	if s.Trust != trust.Untrusted && s.Trust != trust.Trusted && s.Trust != trust.BlockedServer {
		p.add(at("trust"), "want trusted|untrusted|blocked, got %q", s.Trust.String())
	}
	checkLegs(p, at("labels"), s.Labels)

	if s.Sandbox != nil && s.Transport != TransportStdio {
		p.add(at("sandbox"), "only for stdio servers (command): airlock does not start an %s server", s.Transport)
	}
	if s.OAuth != nil {
		s.OAuth.problems(p, at("oauth"), s.Transport)
	}

	for _, name := range slices.Sorted(maps.Keys(s.Tools)) {
		t := s.Tools[name]
		tk := at("tools", name)
		if name == "" {
			p.add(tk, "tool name is empty")
		}
		switch t.Policy {
		case trust.ActionUnset, trust.Allow, trust.Ask, trust.Deny:
		default:
			p.add(append(slices.Clip(tk), "policy"), "want allow|ask|deny, got %q", t.Policy.String())
		}
		checkLegs(p, append(slices.Clip(tk), "labels"), t.Labels)
	}
}

func (o *OAuth) problems(p *problems, k toml.Key, t Transport) {
	at := func(key string) toml.Key { return append(slices.Clip(k), key) }
	if t != TransportHTTP {
		p.add(k, "OAuth is only for http servers (streamable HTTP), not %s", t)
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		p.add(at("client_secret"), "only with client_id")
	}
	if strings.ContainsFunc(o.ClientSecret, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		p.add(at("client_secret"), "has a control character")
	}
	if o.Issuer != "" {
		if o.ClientID == "" {
			p.add(at("issuer"), "only with client_id: it says which authorization server that client belongs to")
		}
		checkURL(p, at("issuer"), o.Issuer)
	}
	if o.ClientMetadataURL != "" {
		u, err := url.Parse(o.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			p.add(at("client_metadata_url"), "want an https URL with a path, where the client ID metadata document is served")
		}
	}
	for i, sc := range o.Scopes {
		// RFC 6749 section 3.3: scope tokens are printable ASCII without space, " or \.
		if sc == "" || strings.ContainsFunc(sc, func(r rune) bool { return r <= ' ' || r > '~' || r == '"' || r == '\\' }) {
			p.addAt(at("scopes"), i, "want a scope token: printable ASCII without spaces, quotes or backslashes, got %q", sc)
		}
	}
	if o.RedirectPort < 0 || o.RedirectPort > 65535 {
		p.add(at("redirect_port"), "want a port from 0 to 65535, got %d", o.RedirectPort)
	}
}

func checkLegs(p *problems, k toml.Key, legs []trust.Leg) {
	for i, l := range legs {
		if _, ok := trust.ParseLeg(string(l)); !ok {
			p.addAt(k, i, "%s", legWant(string(l)))
		}
	}
}

func legWant(got string) string {
	return fmt.Sprintf("want private-data|untrusted-content|exfiltration|persistent, got %q", got)
}

// checkURL wants an absolute http or https URL. It does not quote the URL, which may
// carry a token.
func checkURL(p *problems, k toml.Key, raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		p.add(k, "invalid URL: %v", err)
		return
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		p.add(k, "want an http or https URL, got scheme %q", u.Scheme)
		return
	}
	if u.Host == "" {
		p.add(k, "URL has no host")
	}
}

// validHeaderName reports whether s is an HTTP token (RFC 9110).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
