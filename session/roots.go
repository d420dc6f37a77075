//lint:file-ignore SA1019 sampling and roots are deprecated by the 2026-07-28 spec (SEP-2577); airlock supports them so today's servers can be explored

package session

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session/config"
)

// rootURI is the file:// URI of an absolute path: file:///home/a/b, file:///C:/x on
// Windows; characters a URI path cannot hold are percent-encoded.
func rootURI(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/x
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// rootURIs are the URIs of paths; nil stays nil (no roots declared).
func rootURIs(paths []string) []string {
	if paths == nil {
		return nil
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, rootURI(p))
	}
	return out
}

// rootList is what roots/list answers for uris: each named by its last element.
func rootList(uris []string) []*mcp.Root {
	out := make([]*mcp.Root, 0, len(uris))
	for _, u := range uris {
		name := u
		if pu, err := url.Parse(u); err == nil {
			name = pathBase(pu.Path)
		}
		out = append(out, &mcp.Root{URI: u, Name: name})
	}
	return out
}

func pathBase(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	if p == "" {
		return "/"
	}
	return p
}

// SetRoots replaces the roots airlock answers server's roots/list with (entries as
// in the config's roots: absolute paths, ~/path or file:// URIs that exist; home
// expands ~). It is the change a live config edit makes: a connection that declared
// roots is sent notifications/roots/list_changed at once; a connection that did not
// (the server had no roots when it connected) is reconnected to declare them, since a
// capability cannot be added to a running session. nil withdraws every root (the
// capability stays declared until the next connection).
func (m *Manager) SetRoots(server string, entries []string, home string) error {
	s, ok := m.servers[server]
	if !ok {
		return fmt.Errorf("no server %q", server)
	}
	var paths []string
	if entries != nil {
		paths = []string{}
		for i, e := range entries {
			p, err := config.ParseRoot(e, home)
			if err != nil {
				return fmt.Errorf("servers.%s.roots[%d]: %w", server, i, err)
			}
			if slices.Contains(paths, p) {
				return fmt.Errorf("servers.%s.roots[%d]: %s is listed twice", server, i, p)
			}
			paths = append(paths, p)
		}
	}
	uris := rootURIs(paths)
	s.mu.Lock()
	old := s.roots
	s.roots = uris
	s.infoVer++
	client, declared, connected := s.client, s.declaredRoots, s.cs != nil
	s.mu.Unlock()
	m.dropSnapshot()
	m.notify()
	if slices.Equal(old, uris) && (old == nil) == (uris == nil) {
		return nil
	}
	if !declared || client == nil {
		if connected && uris != nil {
			return m.Reconnect(server)
		}
		return nil
	}
	setRoots(client, old, uris)
	return nil
}

// clientCapabilities is what airlock declares to a server: sampling without tools or
// context (a reply is written by a person, who runs no tools and includes no
// context), elicitation (inferred by go-sdk from its handler), and roots only when
// the server has roots configured (roots not nil).
func clientCapabilities(roots []string) *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}
	if roots != nil {
		caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	}
	return caps
}

// setRoots changes client's roots from old to uris. go-sdk notifies connected
// servers once per change: once for the roots that went away (if any), once for the
// new list. Each notification is followed by the server's roots/list, which answers
// the final list.
func setRoots(client *mcp.Client, old, uris []string) {
	var gone []string
	for _, u := range old {
		if !slices.Contains(uris, u) {
			gone = append(gone, u)
		}
	}
	client.RemoveRoots(gone...)
	client.AddRoots(rootList(uris)...)
}
