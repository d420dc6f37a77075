package gateway

import (
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/trust"
)

// The relay's names: how the gateway names a server's resources, resource templates
// and prompts for agents, and how it reads an agent's name back. Pure functions; the
// grammar is written down in docs/relay.md.
//
//	relay-uri      = "airlock://" server ( "/" verbatim / "?" escaped )
//	relay-template = "airlock://" server "/" template
//	server         = a configured server name, [a-z0-9][a-z0-9-]{0,31}
//	verbatim       = the server's URI as it is, when it is made of URI characters only
//	                 (RFC 3986 unreserved, reserved, and "%" followed by two hex digits)
//	escaped        = any other URI, byte by byte: relayKeep bytes as they are, every
//	                 other byte as "%" and two upper-case hex digits
//
// The character after the server name says which form follows, so no name of one form
// can be read as the other, and the server name ends where the first character that
// cannot be in a server name begins, so no two servers' names can be confused. A
// template is always verbatim: the prefix is literal text that expands to itself, so
// what an agent expands from the relayed template is the prefix followed by exactly
// what the server's template would have expanded to.

// RelayScheme is the scheme of every resource URI the gateway serves.
const RelayScheme = "airlock"

const relayPrefix = RelayScheme + "://"

// ErrNotRelayURI is returned (wrapped) for a URI or name that is not of the relay's form.
var ErrNotRelayURI = errors.New("not an airlock relay URI")

// RelayURI is the URI the gateway serves for the resource uri of server. It holds only
// printable ASCII, is a valid URI (its host is server), and ParseRelayURI gives back
// server and uri exactly, whatever bytes uri holds.
func RelayURI(server, uri string) string {
	if isVerbatimURI(uri) {
		return relayPrefix + server + "/" + uri
	}
	var b strings.Builder
	b.Grow(len(relayPrefix) + len(server) + 1 + len(uri)*3)
	b.WriteString(relayPrefix)
	b.WriteString(server)
	b.WriteByte('?')
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(uri); i++ {
		c := uri[i]
		if relayKeep(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// RelayTemplate is the URI template the gateway serves for the resource template tmpl
// of server. It is a valid template whenever tmpl is one, and an agent's expansion of
// it read with ParseRelayURI gives server and the expansion of tmpl with the same
// values.
func RelayTemplate(server, tmpl string) string { return relayPrefix + server + "/" + tmpl }

// ParseRelayURI reads a URI served by RelayURI (or expanded from a RelayTemplate) back
// into the server and the server's own URI. The scheme and the server name are read
// without regard to case (RFC 3986 says both are case-insensitive); anything after the
// server name is exact. It fails on a URI not of the relay's form and on a broken
// "%" escape in the escaped form.
func ParseRelayURI(s string) (server, uri string, err error) {
	server, rest, form, err := splitRelay(s)
	if err != nil {
		return "", "", err
	}
	if form == '/' {
		return server, rest, nil
	}
	out := make([]byte, 0, len(rest))
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if c != '%' {
			out = append(out, c)
			continue
		}
		if i+2 >= len(rest) || !isHex(rest[i+1]) || !isHex(rest[i+2]) {
			return "", "", relayErr(s, "a % that is not followed by two hex digits")
		}
		out = append(out, unhex(rest[i+1])<<4|unhex(rest[i+2]))
		i += 2
	}
	return server, string(out), nil
}

// ParseRelayTemplate reads a template served by RelayTemplate back into the server and
// the server's own template.
func ParseRelayTemplate(s string) (server, tmpl string, err error) {
	server, rest, form, err := splitRelay(s)
	if err != nil {
		return "", "", err
	}
	if form != '/' {
		return "", "", relayErr(s, "a template has no escaped form")
	}
	return server, rest, nil
}

// splitRelay splits s into its server name, the form byte ('/' or '?') and the rest.
func splitRelay(s string) (server, rest string, form byte, err error) {
	if len(s) < len(relayPrefix) || !strings.EqualFold(s[:len(relayPrefix)], relayPrefix) {
		return "", "", 0, relayErr(s, "it does not begin with "+relayPrefix)
	}
	s2 := s[len(relayPrefix):]
	i := 0
	for i < len(s2) && serverNameByte(s2[i]) {
		i++
	}
	server = strings.ToLower(s2[:i])
	if !trust.ValidServerName(server) {
		return "", "", 0, relayErr(s, "no server name follows "+relayPrefix)
	}
	if i == len(s2) || (s2[i] != '/' && s2[i] != '?') {
		return "", "", 0, relayErr(s, `the server name is not followed by "/" or "?"`)
	}
	return server, s2[i+1:], s2[i], nil
}

func relayErr(s, why string) error {
	const most = 200
	shown := s
	if len(shown) > most {
		shown = shown[:most] + "…"
	}
	return &relayURIError{uri: agentText(shown), why: why}
}

type relayURIError struct{ uri, why string }

func (e *relayURIError) Error() string {
	return "not an airlock relay URI (" + e.why + "): " + e.uri
}

func (e *relayURIError) Unwrap() error { return ErrNotRelayURI }

func serverNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-'
}

// isVerbatimURI reports whether u is made of URI characters only (RFC 3986 unreserved
// and reserved characters) with every "%" the start of a %XX escape: such a URI is
// relayed as it is.
func isVerbatimURI(u string) bool {
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c == '%':
			if i+2 >= len(u) || !isHex(u[i+1]) || !isHex(u[i+2]) {
				return false
			}
			i += 2
		case !uriByte(c):
			return false
		}
	}
	return true
}

// uriByte reports whether c is an RFC 3986 unreserved or reserved character.
func uriByte(c byte) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
		return true
	}
	return strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0
}

// relayKeep reports whether the escaped form keeps byte c as it is: characters that
// mean nothing special in a URI's query, except "&", "=" and "+", which query parsers
// read as separators or a space.
func relayKeep(c byte) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
		return true
	}
	return strings.IndexByte("-._~/:@!$'()*,;?", c) >= 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// RelayPromptName is the qualified name of a server's prompt: SERVER__NAME, as for
// tools (server names cannot hold "__", so the first "__" ends the server). The
// gateway serves it under that name where it fits, else under the name
// Snapshot.ServedPromptName maps it to.
func RelayPromptName(server, name string) string {
	return trust.Ref{Server: server, Tool: name}.Qualified()
}

// relayContent rewrites the resource URIs in content a server sent (resource links
// and embedded resources) into relay URIs, so that an agent can read them through the
// gateway. It returns a new slice when anything changed and never modifies content or
// the values it points to (the person's view and the audit keep the server's own).
func relayContent(server string, content []mcp.Content) []mcp.Content {
	var out []mcp.Content
	for i, c := range content {
		var repl mcp.Content
		switch c := c.(type) {
		case *mcp.ResourceLink:
			if c != nil {
				cp := *c
				cp.URI = RelayURI(server, c.URI)
				repl = &cp
			}
		case *mcp.EmbeddedResource:
			if c != nil && c.Resource != nil {
				cp := *c
				rc := *c.Resource
				rc.URI = RelayURI(server, rc.URI)
				cp.Resource = &rc
				repl = &cp
			}
		}
		if repl == nil {
			continue
		}
		if out == nil {
			out = append(make([]mcp.Content, 0, len(content)), content...)
		}
		out[i] = repl
	}
	if out == nil {
		return content
	}
	return out
}
