package gateway_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/yosida95/uritemplate/v3"

	"github.com/airlock-mcp/airlock/session/gateway"
)

func TestRelayURI_Forms(t *testing.T) {
	cases := []struct {
		name, server, uri, want string
	}{
		{"file", "fs", "file:///home/a/notes.txt", "airlock://fs/file:///home/a/notes.txt"},
		{"query and fragment stay visible", "docs", "test://static/x?y=1&z=%20#frag", "airlock://docs/test://static/x?y=1&z=%20#frag"},
		{"percent escapes are kept as they are", "docs", "file:///caf%C3%A9", "airlock://docs/file:///caf%C3%A9"},
		{"empty", "docs", "", "airlock://docs/"},
		{"dot segments are kept", "docs", "file:///a/../b", "airlock://docs/file:///a/../b"},
		{"an airlock URI of a server is another server's plain URI", "a", "airlock://b/x", "airlock://a/airlock://b/x"},
		{"space", "docs", "file:///my notes.txt", "airlock://docs?file:///my%20notes.txt"},
		{"non-ASCII", "docs", "file:///café", "airlock://docs?file:///caf%C3%A9"},
		{"a lone percent", "docs", "x:100%", "airlock://docs?x:100%25"},
		{"percent with non-hex", "docs", "x:%zz", "airlock://docs?x:%25zz"},
		{"control characters", "docs", "x:\x1b[2J\r\n", "airlock://docs?x:%1B%5B2J%0D%0A"},
		{"not UTF-8", "docs", "x:\xff\xfe", "airlock://docs?x:%FF%FE"},
		{"separators are escaped in the escaped form", "docs", "a b?c=d&e+f#g", "airlock://docs?a%20b?c%3Dd%26e%2Bf%23g"},
		{"braces", "docs", "x:{y}", "airlock://docs?x:%7By%7D"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := gateway.RelayURI(c.server, c.uri)
			if got != c.want {
				t.Errorf("RelayURI(%q, %q) = %q, want %q", c.server, c.uri, got, c.want)
			}
			server, uri, err := gateway.ParseRelayURI(got)
			if err != nil || server != c.server || uri != c.uri {
				t.Errorf("ParseRelayURI(%q) = %q, %q, %v; want %q, %q", got, server, uri, err, c.server, c.uri)
			}
		})
	}
}

func TestParseRelayURI_Refuses(t *testing.T) {
	cases := []struct{ name, in string }{
		{"another scheme", "file:///etc/passwd"},
		{"no authority", "airlock:docs/x"},
		{"no server", "airlock:///x"},
		{"nothing after the server", "airlock://docs"},
		{"userinfo", "airlock://me@docs/x"},
		{"port", "airlock://docs:80/x"},
		{"server name with a dot", "airlock://docs.evil/x"},
		{"server name with an underscore", "airlock://do_cs/x"},
		{"server name too long", "airlock://" + strings.Repeat("a", 33) + "/x"},
		{"server name starting with a dash", "airlock://-docs/x"},
		{"a broken escape", "airlock://docs?x:%2"},
		{"a non-hex escape", "airlock://docs?x:%zz"},
		{"empty", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, u, err := gateway.ParseRelayURI(c.in)
			if !errors.Is(err, gateway.ErrNotRelayURI) {
				t.Errorf("ParseRelayURI(%q) = %q, %q, %v; want ErrNotRelayURI", c.in, s, u, err)
			}
		})
	}
}

// The scheme and the server name are case-insensitive (RFC 3986): a client that
// normalises the URI still reads the same server; the rest is exact.
func TestParseRelayURI_CaseOfSchemeAndHost(t *testing.T) {
	s, u, err := gateway.ParseRelayURI("AIRLOCK://Docs/File:///A")
	if err != nil || s != "docs" || u != "File:///A" {
		t.Errorf("got %q %q %v", s, u, err)
	}
}

func TestRelayURI_HostileIsBoundedAndExact(t *testing.T) {
	huge := strings.Repeat("\x00\xff%é ", 1<<18) // 1.5 MB of the worst bytes
	r := gateway.RelayURI("docs", huge)
	if len(r) > len("airlock://docs?")+3*len(huge) {
		t.Errorf("relay URI of %d bytes is %d bytes", len(huge), len(r))
	}
	if _, err := url.Parse(r); err != nil {
		t.Errorf("relay URI does not parse: %v", err)
	}
	if _, u, err := gateway.ParseRelayURI(r); err != nil || u != huge {
		t.Errorf("huge URI did not round-trip (err %v)", err)
	}
}

func TestRelayTemplate_ExpansionCommutes(t *testing.T) {
	vals := uritemplate.Values{
		"id":   uritemplate.String("a b/c%2F?#é"),
		"path": uritemplate.String("dir/../x y"),
		"f":    uritemplate.String("frag"),
	}
	for _, tmpl := range []string{
		"test://static/resource/{id}",
		"file:///{+path}",
		"users://{id}/profile{?f}",
		"{+path}{#f}",
		"x:caf%C3%A9/{id}",
		"x:/{/path}{;id}{.f}{&f}",
	} {
		t.Run(tmpl, func(t *testing.T) {
			up := mustTemplate(t, tmpl)
			relayed := gateway.RelayTemplate("docs", tmpl)
			rt := mustTemplate(t, relayed)
			s, back, err := gateway.ParseRelayTemplate(relayed)
			if err != nil || s != "docs" || back != tmpl {
				t.Fatalf("ParseRelayTemplate(%q) = %q %q %v", relayed, s, back, err)
			}
			want, err := up.Expand(vals)
			if err != nil {
				t.Fatal(err)
			}
			got, err := rt.Expand(vals)
			if err != nil {
				t.Fatal(err)
			}
			server, uri, err := gateway.ParseRelayURI(got)
			if err != nil || server != "docs" || uri != want {
				t.Errorf("expansion %q reads back as %q %q %v; the server's template expands to %q", got, server, uri, err, want)
			}
		})
	}
}

func mustTemplate(t *testing.T, s string) *uritemplate.Template {
	t.Helper()
	tmpl, err := uritemplate.New(s)
	if err != nil {
		t.Fatalf("template %q: %v", s, err)
	}
	return tmpl
}

func TestRelayPromptName(t *testing.T) {
	if got := gateway.RelayPromptName("docs", "summarise__all"); got != "docs__summarise__all" {
		t.Errorf("got %q", got)
	}
}

var fuzzServers = []string{"a", "b", "a-b", "ab", "docs", "0", strings.Repeat("z", 32)}

// FuzzRelayURI: any URI of any server round-trips exactly, is a printable-ASCII URI
// whose host is its server, and two different (server, URI) pairs never share a relay
// URI.
func FuzzRelayURI(f *testing.F) {
	for _, s := range []string{"", "file:///x", "x y", "%", "%2", "%zz", "\xff", "a#b#c", "?x", "/x", "airlock://b/x", "é", "\x00"} {
		f.Add(uint8(0), s, uint8(1), s+"/")
	}
	f.Fuzz(func(t *testing.T, si uint8, uri string, sj uint8, other string) {
		server := fuzzServers[int(si)%len(fuzzServers)]
		r := gateway.RelayURI(server, uri)
		s, u, err := gateway.ParseRelayURI(r)
		if err != nil || s != server || u != uri {
			t.Fatalf("RelayURI(%q, %q) = %q reads back as %q %q %v", server, uri, r, s, u, err)
		}
		for i := 0; i < len(r); i++ {
			if r[i] <= ' ' || r[i] >= 0x7f {
				t.Fatalf("RelayURI(%q, %q) = %q holds byte %#x", server, uri, r, r[i])
			}
		}
		pu, err := url.Parse(r)
		if err != nil || pu.Scheme != gateway.RelayScheme || pu.Host != server || pu.User != nil {
			t.Fatalf("RelayURI(%q, %q) = %q parses as %+v, %v", server, uri, r, pu, err)
		}
		server2 := fuzzServers[int(sj)%len(fuzzServers)]
		if (server2 != server || other != uri) && gateway.RelayURI(server2, other) == r {
			t.Fatalf("(%q, %q) and (%q, %q) share the relay URI %q", server, uri, server2, other, r)
		}
	})
}

// FuzzParseRelayURI: whatever an agent sends, parsing never panics, and a URI it
// accepts names a valid server and is the relay URI's own reading: relaying it again
// gives a URI that reads back the same.
func FuzzParseRelayURI(f *testing.F) {
	for _, s := range []string{"airlock://docs/x", "airlock://docs?%41", "airlock://DOCS/x", "airlock://docs?%", "airlock://", "airlock://-/x", "airlock://docs/\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		server, uri, err := gateway.ParseRelayURI(s)
		if err != nil {
			if !errors.Is(err, gateway.ErrNotRelayURI) || !utf8.ValidString(err.Error()) {
				t.Fatalf("error %q", err)
			}
			return
		}
		s2, u2, err := gateway.ParseRelayURI(gateway.RelayURI(server, uri))
		if err != nil || s2 != server || u2 != uri {
			t.Fatalf("%q reads as %q %q, which relays to something that reads as %q %q %v", s, server, uri, s2, u2, err)
		}
	})
}

// FuzzRelayTemplate: a valid template stays valid, and reads back exactly.
func FuzzRelayTemplate(f *testing.F) {
	for _, s := range []string{"file:///{path}", "{+x}", "x{?a,b}", "café/{x}", "{x}{#y}"} {
		f.Add(s, "a b/c")
	}
	f.Fuzz(func(t *testing.T, tmpl, val string) {
		up, err := uritemplate.New(tmpl)
		if err != nil {
			return
		}
		relayed := gateway.RelayTemplate("docs", tmpl)
		rt, err := uritemplate.New(relayed)
		if err != nil {
			t.Fatalf("%q is a template, %q is not: %v", tmpl, relayed, err)
		}
		if s, back, err := gateway.ParseRelayTemplate(relayed); err != nil || s != "docs" || back != tmpl {
			t.Fatalf("ParseRelayTemplate(%q) = %q %q %v", relayed, s, back, err)
		}
		vals := uritemplate.Values{}
		for _, name := range up.Varnames() {
			vals.Set(name, uritemplate.String(val))
		}
		want, err1 := up.Expand(vals)
		got, err2 := rt.Expand(vals)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("expanding %q: %v; expanding %q: %v", tmpl, err1, relayed, err2)
		}
		if err1 != nil {
			return
		}
		if s, uri, err := gateway.ParseRelayURI(got); err != nil || s != "docs" || uri != want {
			t.Fatalf("expansion %q reads as %q %q %v; want %q", got, s, uri, err, want)
		}
	})
}
