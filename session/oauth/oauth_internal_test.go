package oauth

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// The system browser is only ever handed an http(s) URL: a hostile authorization
// server cannot make the opener run a file, a scheme handler or an option.
func TestOpenBrowserRefusesWhatIsNotAWebPage(t *testing.T) {
	for _, u := range []string{"file:///etc/passwd", "javascript:alert(1)", "-version", "--help", "ssh://host", "http:///nohost", "x-scheme-handler:abc", ""} {
		if err := openBrowser(context.Background(), u); err == nil {
			t.Errorf("openBrowser(%q) = nil, want a refusal", u)
		}
	}
}

func TestNonPublic(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": false, "::1": false, "93.184.216.34": false, "2606:4700::1": false,
		"10.0.0.1": true, "192.168.1.1": true, "172.16.0.1": true, "169.254.169.254": true,
		"100.64.0.1": true, "0.0.0.0": true, "224.0.0.1": true, "fe80::1": true, "fc00::1": true,
		"::ffff:10.0.0.1": true,
	} {
		if got := nonPublic(netip.MustParseAddr(addr)); got != want {
			t.Errorf("nonPublic(%s) = %v, want %v", addr, got, want)
		}
	}
}

func TestOAuthGrantNeverPrintsItsSecrets(t *testing.T) {
	g := grant{ClientID: "c", ClientSecret: "cs-secret", AccessToken: "at-secret", RefreshToken: "rt-secret", TokenURL: "https://as/token"}
	for _, s := range []string{fmt.Sprintf("%v", g), fmt.Sprintf("%+v", g), fmt.Sprintf("%#v", g), fmt.Sprintf("%s", &g), fmt.Sprint([]grant{g})} {
		if strings.Contains(s, "secret") {
			t.Errorf("printed grant holds a secret: %s", s)
		}
	}
}

func TestOAuthStore(t *testing.T) {
	for _, dir := range []string{"", t.TempDir()} {
		s := NewStore(dir)
		if _, g, err := s.lookup("https://mcp/a", ""); g != nil || err != nil {
			t.Fatalf("empty store: %v %v", g, err)
		}
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(s.save("https://as1", "https://mcp/a", &grant{ClientID: "c1", AccessToken: "a1"}))
		must(s.save("https://as1", "https://mcp/b", &grant{ClientID: "c1", AccessToken: "b1"}))
		// The server's authorization server changed: the new issuer's grant replaces
		// the old one for that resource only.
		must(s.save("https://as2", "https://mcp/a", &grant{ClientID: "c2", AccessToken: "a2"}))
		iss, g, err := s.lookup("https://mcp/a", "")
		if err != nil || iss != "https://as2" || g.AccessToken != "a2" {
			t.Errorf("dir %q: lookup a = %s %v %v", dir, iss, g, err)
		}
		if _, g, _ := s.lookup("https://mcp/a", "c1"); g != nil {
			t.Errorf("dir %q: a grant to another client was offered", dir)
		}
		if iss, g, _ := s.lookup("https://mcp/b", "c1"); iss != "https://as1" || g == nil || g.AccessToken != "b1" {
			t.Errorf("dir %q: lookup b = %s %v", dir, iss, g)
		}
	}
}

// Each platform opens the browser with its own opener and the URL as one
// argument, never through a shell (no sh -c, no cmd /c); a URL with a space or
// quote, which could split into two arguments on Windows, is refused.
func TestBrowserCommandPerPlatform(t *testing.T) {
	const u = "https://as.example/authorize?client_id=c&state=a%20b&x=^&y=|"
	for _, tt := range []struct {
		goos, name string
		args       []string
	}{
		{"linux", "xdg-open", []string{u}},
		{"freebsd", "xdg-open", []string{u}},
		{"darwin", "open", []string{u}},
		{"windows", "rundll32", []string{"url.dll,FileProtocolHandler", u}},
	} {
		name, args := browserCommand(tt.goos, u)
		if name != tt.name || fmt.Sprint(args) != fmt.Sprint(tt.args) {
			t.Errorf("%s: %s %q, want %s %q", tt.goos, name, args, tt.name, tt.args)
		}
		for _, shell := range []string{"sh", "bash", "cmd", "cmd.exe", "powershell", "explorer"} {
			if strings.EqualFold(name, shell) {
				t.Errorf("%s opens through %s", tt.goos, name)
			}
		}
	}
	if err := openableURL(u); err != nil {
		t.Errorf("a percent-encoded URL with & ^ | was refused: %v", err)
	}
	for _, bad := range []string{"https://as.example/a b", `https://as.example/"x`, "https://as.example/\tx", "https://as.example/\x7f"} {
		if err := openableURL(bad); err == nil {
			t.Errorf("openableURL(%q) = nil", bad)
		}
	}
}
