package trust

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// denyHosts is the deny list a server-side request forgery guard starts with.
var denyHosts = []any{"169.254.169.254", "127.0.0.1", "localhost", "::1"}

// What a host matcher does with one spelling of a URL.
const (
	hostDenied   = "deny"     // read as a denied host: the deny matches, an allow on it too
	hostUnsafe   = "unsafe"   // cannot be compared safely: deny and ask match, allow never
	hostDistinct = "distinct" // another host: no rule on the denied hosts matches
)

// hostSpelling is one URL and what a host matcher makes of it against denyHosts;
// key is the host it is compared as (hostDenied only).
type hostSpelling struct {
	url, want, key string
}

// hostSpellings are the spellings of the denied hosts that URL parsers (the WHATWG
// URL Standard's, which Node, browsers and most HTTP clients follow) turn into
// them, and some near misses.
var hostSpellings = []hostSpelling{
	// 169.254.169.254 in every IPv4 form the IPv4 parser accepts
	{"http://169.254.169.254/latest/meta-data/", hostDenied, "169.254.169.254"},
	{"http://2852039166/", hostDenied, "169.254.169.254"},
	{"http://0xa9fea9fe/", hostDenied, "169.254.169.254"},
	{"http://0XA9FEA9FE/", hostDenied, "169.254.169.254"},
	{"http://025177524776/", hostDenied, "169.254.169.254"},
	{"http://0xa9.0xfe.0xa9.0xfe/", hostDenied, "169.254.169.254"},
	{"http://0251.0376.0251.0376/", hostDenied, "169.254.169.254"},
	{"http://169.254.43518/", hostDenied, "169.254.169.254"},
	{"http://169.16689662/", hostDenied, "169.254.169.254"},
	{"http://[::ffff:a9fe:a9fe]/", hostDenied, "169.254.169.254"},
	{"http://[::ffff:169.254.169.254]/", hostDenied, "169.254.169.254"},
	{"http://[0:0:0:0:0:ffff:a9fe:a9fe]/", hostDenied, "169.254.169.254"},
	{"http://[::a9fe:a9fe]/", hostDenied, "169.254.169.254"},
	{"http://１６９.２５４.１６９.２５４/", hostDenied, "169.254.169.254"},
	// 127.0.0.1
	{"http://0x7f.1/", hostDenied, "127.0.0.1"},
	{"http://127.1/", hostDenied, "127.0.0.1"},
	{"http://127.0.1/", hostDenied, "127.0.0.1"},
	{"http://2130706433/", hostDenied, "127.0.0.1"},
	{"http://017700000001/", hostDenied, "127.0.0.1"},
	{"http://0x7f000001/", hostDenied, "127.0.0.1"},
	{"http://0x7F.0.0.1/", hostDenied, "127.0.0.1"},
	{"http://0177.0.0.01/", hostDenied, "127.0.0.1"},
	{"http://127.0.0.0x1/", hostDenied, "127.0.0.1"},
	{"http://127.0.0.1./", hostDenied, "127.0.0.1"},
	{"http://127.0.0.1:8080/", hostDenied, "127.0.0.1"},
	{"http://evil@127.0.0.1/", hostDenied, "127.0.0.1"},
	{"http://docs.python.org@127.0.0.1/", hostDenied, "127.0.0.1"},
	{"http://a@b@127.0.0.1/", hostDenied, "127.0.0.1"},
	{"http://１２７.0.0.1/", hostDenied, "127.0.0.1"},
	{"http://127。0。0。1/", hostDenied, "127.0.0.1"},
	{"http://127．0．0．1/", hostDenied, "127.0.0.1"},
	{"http://127｡0｡0｡1/", hostDenied, "127.0.0.1"},
	{"http://[::127.0.0.1]/", hostDenied, "127.0.0.1"},
	{"http://[::7f00:1]/", hostDenied, "127.0.0.1"},
	{"http://[::ffff:7f00:1]/", hostDenied, "127.0.0.1"},
	{"http://[::FFFF:127.0.0.1]:80/", hostDenied, "127.0.0.1"},
	{"wss://127.1/", hostDenied, "127.0.0.1"},
	{"127.0.0.1:9/x", hostDenied, "127.0.0.1"},
	{"2130706433", hostDenied, "127.0.0.1"},
	// localhost
	{"http://localhost/", hostDenied, "localhost"},
	{"http://LOCALHOST/", hostDenied, "localhost"},
	{"HTTP://LocalHost/", hostDenied, "localhost"},
	{"http://localhost./", hostDenied, "localhost"},
	{"http://localhost../", hostDenied, "localhost"},
	{"http://local\u00adhost/", hostDenied, "localhost"},
	{"http://\u00adlocalhost\u00ad/", hostDenied, "localhost"},
	{"http://local\u200bhost/", hostDenied, "localhost"},
	{"http://local\u034fhost/", hostDenied, "localhost"},
	{"http://local\ufe0fhost/", hostDenied, "localhost"},
	{"http://\ufefflocalhost/", hostDenied, "localhost"},
	{"http://ｌｏｃａｌｈｏｓｔ/", hostDenied, "localhost"},
	{"http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/", hostDenied, "localhost"},
	{"http://localhoſt/", hostDenied, "localhost"},
	{"http://localhoﬆ/", hostDenied, "localhost"},
	{"http://user:pass@localhost:8080/x", hostDenied, "localhost"},
	{"https://localhost#@evil.com", hostDenied, "localhost"},
	{"https://localhost?@evil.com", hostDenied, "localhost"},
	{"localhost/x", hostDenied, "localhost"},
	{"localhost:8080/x", hostDenied, "localhost"},
	{"localhost:8080", hostDenied, "localhost"},
	{"//localhost/x", hostDenied, "localhost"},
	{"ws://localhost:1/", hostDenied, "localhost"},
	// ::1
	{"http://[::1]/", hostDenied, "::1"},
	{"http://[::1]:80/", hostDenied, "::1"},
	{"http://[0:0:0:0:0:0:0:1]/", hostDenied, "::1"},
	{"http://[0000:0000:0000:0000:0000:0000:0000:0001]/", hostDenied, "::1"},
	{"http://[::0:1]/", hostDenied, "::1"},
	{"http://[0::1]/", hostDenied, "::1"},
	// The URL Standard reads these as a denied host, Go's net/url as another host
	// or none: they cannot be compared safely.
	{"http:/localhost/x", hostUnsafe, ""},
	{"http:localhost/x", hostUnsafe, ""},
	{"http:///localhost/", hostUnsafe, ""},
	{`http:\\localhost\x`, hostUnsafe, ""},
	{`http:\/localhost/`, hostUnsafe, ""},
	{`http://localhost\@evil.com/`, hostUnsafe, ""},
	{`http://evil.com\@localhost/`, hostUnsafe, ""},
	{"http://loc\thost/", hostUnsafe, ""},
	{"http://local\nhost/", hostUnsafe, ""},
	{"http://127.0.0.\r1/", hostUnsafe, ""},
	{" http://localhost/", hostUnsafe, ""},
	{"\x00http://localhost/", hostUnsafe, ""},
	{"http://localhost/\x01", hostUnsafe, ""},
	{"http://%6c%6f%63%61%6c%68%6f%73%74/", hostUnsafe, ""},
	{"http://%31%32%37.0.0.1/", hostUnsafe, ""},
	{"http://local%C2%ADhost/", hostDenied, "localhost"},
	// The parser fails, or the host reaches this machine whatever its name.
	{"http://0.0.0.0/", hostUnsafe, ""},
	{"http://0/", hostUnsafe, ""},
	{"http://0x0/", hostUnsafe, ""},
	{"http://[::]/", hostUnsafe, ""},
	{"http://[::ffff:0.0.0.0]/", hostUnsafe, ""},
	{"http://[::1%25eth0]/", hostUnsafe, ""},
	{"http://[fe80::1%25lo]/", hostUnsafe, ""},
	{"http://[::1/", hostUnsafe, ""},
	{"http://[::ffff:127.0.0.01]/", hostUnsafe, ""},
	{"http://.localhost/", hostUnsafe, ""},
	{"http://local..host/", hostUnsafe, ""},
	{"http://127.0.0.1.1/", hostUnsafe, ""},
	{"http://256.0.0.1/", hostUnsafe, ""},
	{"http://4294967296/", hostUnsafe, ""},
	{"http://0x100000000/", hostUnsafe, ""},
	{"http://1.2.3.09/", hostUnsafe, ""},
	{"http://foo.09/", hostUnsafe, ""},
	{"http://localhost.0x/", hostUnsafe, ""},
	{"http://", hostUnsafe, ""},
	{"http://user@/", hostUnsafe, ""},
	{"http://localhost:99999/", hostUnsafe, ""},
	{"http://localhost:8a/", hostUnsafe, ""},
	{"http://local host/", hostUnsafe, ""},
	{"http://local<host/", hostUnsafe, ""},
	{"http://xn--/", hostUnsafe, ""},
	{"http://xn--localhost-.com/", hostUnsafe, ""},
	{"file:///etc/passwd", hostUnsafe, ""},
	{"file://localhost/etc/passwd", hostUnsafe, ""},
	{"ftp://localhost/", hostUnsafe, ""},
	{"gopher://localhost:70/", hostUnsafe, ""},
	{"mailto:root@localhost", hostUnsafe, ""},
	{"javascript:fetch('http://localhost')", hostUnsafe, ""},
	{"localhost:", hostUnsafe, ""},
	{"", hostUnsafe, ""},
	// Other hosts: exact names and addresses, no ranges, no DNS.
	{"http://127.0.0.2/", hostDistinct, ""},
	{"http://169.254.169.253/", hostDistinct, ""},
	{"http://localhost.evil.com/", hostDistinct, ""},
	{"http://127.0.0.1.nip.io/", hostDistinct, ""},
	{"http://foo.localhost/", hostDistinct, ""},
	{"http://local_host/", hostDistinct, ""},
	{"http://localhost-/", hostDistinct, ""},
	{"http://lоcalhost/", hostDistinct, ""},
	{"http://[::2]/", hostDistinct, ""},
	{"http://[64:ff9b::a9fe:a9fe]/", hostDistinct, ""},
	{"http://[::1:1]/", hostDistinct, ""},
}

func hostArgs(u string) string {
	b, _ := json.Marshal(map[string]string{"url": u})
	return string(b)
}

// A deny list of hosts holds for every spelling a URL parser reads as one of them.
func TestHosts_DenyListSpellings(t *testing.T) {
	deny := mustCond(t, "url", MatchHost, denyHosts)
	for _, tc := range hostSpellings {
		t.Run(fmt.Sprintf("%q", tc.url), func(t *testing.T) {
			got := evalCond(deny, hostArgs(tc.url), nil)
			want := map[string]result{hostDenied: matched, hostUnsafe: unsafe, hostDistinct: noMatch}[tc.want]
			if got != want {
				t.Errorf("host deny list on %q = %v, want %v (%s)", tc.url, got, want, tc.want)
			}
			key, ok := URLHost(tc.url)
			if tc.want == hostDenied && (!ok || key != tc.key) {
				t.Errorf("URLHost(%q) = %q, %v; want %q", tc.url, key, ok, tc.key)
			}
			if tc.want == hostUnsafe && ok {
				t.Errorf("URLHost(%q) = %q, want none (cannot be compared safely)", tc.url, key)
			}
		})
	}
}

// A host pattern is read as a host the way a call's value is: `deny 127.0.0.1` is
// also `deny 2130706433`, `localhost.` is localhost.
func TestHosts_PatternsNormalised(t *testing.T) {
	cases := []struct {
		pattern any
		url     string
	}{
		{"2130706433", "http://127.0.0.1/"},
		{"0x7f.1", "http://127.0.0.1/"},
		{"127.0.0.1", "http://2130706433/"},
		{"localhost.", "http://localhost/"},
		{"LOCALHOST", "http://localhost/"},
		{"localhost", "http://localhost./"},
		{"[::1]", "http://[0:0::1]/"},
		{"::1", "http://[::1]/"},
		{"0:0:0:0:0:0:0:1", "http://[::1]/"},
		{"::ffff:a9fe:a9fe", "http://169.254.169.254/"},
		{"[::ffff:169.254.169.254]", "http://2852039166/"},
		{"１２７。0。0。1", "http://127.0.0.1/"},
		{"bücher.example", "https://xn--bcher-kva.example/"},
		{"xn--bcher-kva.example", "https://BÜCHER.example/"},
		{"*.bücher.example", "https://a.xn--bcher-kva.example/"},
		{"*.example.", "https://a.example/"},
	}
	for _, tc := range cases {
		c := mustCond(t, "url", MatchHost, tc.pattern)
		if got := evalCond(c, hostArgs(tc.url), nil); got != matched {
			t.Errorf("host %v on %q = %v, want matched", tc.pattern, tc.url, got)
		}
		// The indexed rule set finds it the same way.
		r := mustRule(t, "r", Deny, c)
		if m := MatchRules([]Rule{r}, DecodeArgs([]byte(hostArgs(tc.url)), testHome, nil)); m == nil {
			t.Errorf("rule set: host %v does not match %q", tc.pattern, tc.url)
		}
	}
	for _, bad := range []string{"", "*", "*.", "a.*.com", "*.127.0.0.1", "*.[::1]", "localhost:8080", "http://localhost", "a/b", "a b", "[::1", ".localhost", "a..b", "256.0.0.1", "1.2.3.09", "xn--"} {
		if _, err := NewCond("url", MatchHost, bad, testHome); err == nil {
			t.Errorf("host %q accepted as a pattern", bad)
		}
	}
}

// FuzzHostDeny: a deny on host H holds for every spelling of H. Each input is
// turned into a spelling of one denied host by choices a URL parser is known to
// undo (IPv4 forms, mapped IPv6, case, full-width digits, other full stops, soft
// hyphens, userinfo, ports, slashes, tabs, trailing dots), and also read as a URL
// itself; whenever the URL Standard's reading of either is a denied host, the deny
// rule matches and an allow rule on every URL does not decide the call.
func FuzzHostDeny(f *testing.F) {
	for _, tc := range hostSpellings {
		f.Add([]byte(tc.url))
	}
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{3, 200, 17, 99, 4, 1, 250, 33})
	deny := mustRule(f, "deny", Deny, mustCond(f, "url", MatchHost, denyHosts))
	allow := mustRule(f, "allow", Allow, mustCond(f, "url", MatchMax, int64(1<<20)))
	set := NewRuleSet([]Rule{allow, deny})
	check := func(t *testing.T, u, why string) {
		a := DecodeArgs([]byte(hostArgs(u)), testHome, nil)
		if got := deny.When[0].eval(a); got == noMatch {
			t.Fatalf("%s: deny %v does not match %q", why, denyHosts, u)
		}
		if r := set.Match(a); r == nil || r.Policy == Allow {
			t.Fatalf("%s: %q allowed (%v)", why, u, r)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := string(data)
		if key, ok := URLHost(s); ok {
			for _, h := range denyHosts {
				if key == h {
					check(t, s, "read as "+key)
				}
			}
		}
		u := spellDenied(data)
		check(t, u, "spelled")
	})
}

// spellDenied makes a URL of one of denyHosts, spelled as data chooses.
func spellDenied(data []byte) string {
	i := 0
	next := func(n int) int {
		if i >= len(data) {
			return 0
		}
		i++
		return int(data[i-1]) % n
	}
	var host string
	switch next(4) {
	case 0, 1: // 169.254.169.254 or 127.0.0.1
		v := []uint32{0xa9fea9fe, 0x7f000001}[next(2)]
		host = spellIPv4(v, next)
		if next(4) == 0 {
			host = spellMapped(v, next)
		}
	case 2: // localhost
		var b strings.Builder
		for _, r := range "localhost" {
			switch next(8) {
			case 0:
				r -= 'a' - 'A'
			case 1:
				r += 'ａ' - 'a' // full-width letter
			}
			b.WriteRune(r)
			if next(6) == 0 {
				b.WriteString([]string{"\u00ad", "\u200b", "\ufe0f", "\u034f"}[next(4)])
			}
		}
		host = b.String()
	case 3: // ::1
		groups := []string{"0", "0", "0", "0", "0", "0", "0", "1"}
		for k := range groups {
			groups[k] = strings.Repeat("0", next(4)) + groups[k]
		}
		host = "[" + strings.Join(groups, ":") + "]"
		if next(2) == 0 {
			host = "[::" + strings.Repeat("0", next(4)) + "1]"
		}
	}
	if !strings.HasPrefix(host, "[") {
		for k := next(3); k > 0; k-- {
			host += "."
		}
		host = otherDots(host, next)
	}
	scheme := []string{"http://", "https://", "HTTP://", "ws://", "wss://", "", "//", "http:/", "http:", `http:\\`, "https:///", `http:/\`}[next(12)]
	user := []string{"", "a@", "a:b@", "docs.python.org@", "a@b@"}[next(5)]
	port := []string{"", ":80", ":", ":0008080"}[next(4)]
	path := []string{"", "/", "/x?y#z", "?q", "#f", "/@evil.com"}[next(6)]
	if scheme == "" && user != "" {
		user = ""
	}
	u := scheme + user + host + port + path
	// tabs and newlines anywhere, C0 controls and spaces around: the parser drops them
	for k := next(3); k > 0; k-- {
		at := next(len(u) + 1)
		for at < len(u) && !utf8.RuneStart(u[at]) {
			at++
		}
		u = u[:at] + []string{"\t", "\n", "\r"}[next(3)] + u[at:]
	}
	if next(4) == 0 {
		u = " \x01" + u + "\x00 "
	}
	return u
}

// spellIPv4 spells v as the IPv4 parser reads it: one to four parts, each in
// decimal, hex or octal, digits full-width or not.
func spellIPv4(v uint32, next func(int) int) string {
	b := [4]uint32{v >> 24, v >> 16 & 0xff, v >> 8 & 0xff, v & 0xff}
	var parts []uint32
	switch next(4) {
	case 0:
		parts = []uint32{v}
	case 1:
		parts = []uint32{b[0], v & 0xffffff}
	case 2:
		parts = []uint32{b[0], b[1], v & 0xffff}
	default:
		parts = b[:]
	}
	out := make([]string, len(parts))
	for k, p := range parts {
		switch next(3) {
		case 0:
			out[k] = fmt.Sprint(p)
		case 1:
			out[k] = []string{"0x", "0X"}[next(2)] + strings.Repeat("0", next(3)) + fmt.Sprintf("%x", p)
		default:
			out[k] = "0" + fmt.Sprintf("%o", p)
		}
		if next(5) == 0 {
			out[k] = strings.Map(func(r rune) rune {
				if r >= '0' && r <= '9' {
					return r + '０' - '0'
				}
				return r
			}, out[k])
		}
	}
	return strings.Join(out, ".")
}

// spellMapped spells v as an IPv4-mapped or IPv4-compatible IPv6 address.
func spellMapped(v uint32, next func(int) int) string {
	hi, lo := v>>16, v&0xffff
	dotted := fmt.Sprintf("%d.%d.%d.%d", v>>24, v>>16&0xff, v>>8&0xff, v&0xff)
	switch next(5) {
	case 0:
		return fmt.Sprintf("[::ffff:%x:%x]", hi, lo)
	case 1:
		return "[::ffff:" + dotted + "]"
	case 2:
		return fmt.Sprintf("[0:0:0:0:0:FFFF:%X:%X]", hi, lo)
	case 3:
		return "[::" + dotted + "]"
	}
	return fmt.Sprintf("[::%x:%x]", hi, lo)
}

// otherDots replaces some full stops by the ones UTS #46 maps to a full stop.
func otherDots(s string, next func(int) int) string {
	var b strings.Builder
	for _, r := range s {
		if r == '.' && next(3) == 0 {
			r = []rune{'。', '．', '｡'}[next(3)]
		}
		b.WriteRune(r)
	}
	return b.String()
}

// A URL held in a list, an object, a number or null is never compared as a host: an
// allow on the host never decides the call, through the indexed rule set too, and a
// deny on the host always does.
func TestHosts_NonStringValueNeverAllowed(t *testing.T) {
	allow := mustRule(t, "allow", Allow, mustCond(t, "url", MatchHost, []any{"example.com", "*.example.com"}))
	deny := mustRule(t, "deny", Deny, mustCond(t, "url", MatchHost, denyHosts))
	for _, args := range []string{
		`{"url":["http://example.com/","http://127.0.0.1/"]}`,
		`{"url":{"href":"http://127.0.0.1/","host":"example.com"}}`,
		`{"url":2130706433}`, `{"url":null}`, `{"url":true}`,
	} {
		a := DecodeArgs([]byte(args), testHome, nil)
		if r := NewRuleSet([]Rule{allow}).Match(a); r != nil {
			t.Errorf("%s: allow on example.com decided the call", args)
		}
		if r := NewRuleSet([]Rule{allow, deny}).Match(a); r == nil || r.Policy != Deny {
			t.Errorf("%s: a host deny list did not deny it (%v)", args, r)
		}
	}
}
