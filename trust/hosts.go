package trust

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// A host matcher compares hosts as the server will connect to them, not as text.
// Servers hand a URL to a parser that follows the WHATWG URL Standard (browsers,
// Node's URL and fetch, and most HTTP clients) or one close to it, and that parser
// reads `http://2852039166/`, `http://0x7f.1/`, `http://[::ffff:a9fe:a9fe]/`,
// full-width digits, ideographic full stops and `http:/localhost` as ordinary
// hosts. So a value is read here by the standard's own algorithms (the URL parser
// as far as the host, the host parser, the IPv4 and IPv6 parsers, and domain to
// ASCII with UTS #46 through golang.org/x/net/idna), and the host it yields is
// then put in the one form a rule's patterns are also in (hostKey). A value whose
// host Go's net/url reads otherwise cannot be compared safely: one of the two
// readings is wrong about what the server will reach.

// hostProfile is UTS #46 ToASCII with the flags the URL Standard's "domain to
// ASCII" sets when it is not strict: CheckHyphens false, CheckBidi and
// CheckJoiners true, UseSTD3ASCIIRules false, nontransitional processing,
// VerifyDnsLength false.
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
	idna.CheckJoiners(true),
	idna.VerifyDNSLength(false),
)

// hostKind says what a parsed host is.
type hostKind byte

const (
	hostDomain hostKind = 'd'
	hostIPv4   hostKind = '4'
	hostIPv6   hostKind = '6'
)

// webHost is a host as the URL Standard's host parser returns it.
type webHost struct {
	kind   hostKind
	domain string    // hostDomain: ASCII, lower case
	v4     uint32    // hostIPv4
	v6     [8]uint16 // hostIPv6
}

// String is the host serialised as the URL Standard does (what Node's
// URL.hostname says): an IPv6 address in brackets.
func (h webHost) String() string {
	switch h.kind {
	case hostIPv4:
		return ipv4String(h.v4)
	case hostIPv6:
		return "[" + ipv6String(h.v6) + "]"
	}
	return h.domain
}

// specialSchemes are the URL Standard's special schemes other than file, whose
// URLs always have a host; the value names the ones a host rule compares.
var specialSchemes = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": false}

// webURLHost reads s as the URL Standard's basic URL parser does, with no base URL,
// as far as the host: the leading and trailing C0 controls and spaces and every
// tab and newline removed, the scheme, the slashes and backslashes after it (any
// number, none included: `http:localhost` is localhost), the userinfo up to the last
// '@' of the authority, and the port checked. scheme is "" and ok false when s has
// no special scheme or the parser would fail.
func webURLHost(s string) (scheme string, h webHost, ok bool) {
	s = stripTabsAndNewlines(strings.TrimFunc(s, func(r rune) bool { return r <= 0x20 }))
	scheme, rest, ok := cutScheme(s)
	if !ok {
		return "", h, false
	}
	if _, special := specialSchemes[scheme]; !special {
		return "", h, false
	}
	rest = strings.TrimLeft(rest, `/\`)
	authority := rest
	if i := strings.IndexAny(rest, `/\?#`); i >= 0 {
		authority = rest[:i]
	}
	hostPort := authority
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		hostPort = authority[i+1:]
	}
	// The host ends at the first ':' outside brackets; a port follows.
	host, port := hostPort, ""
	inside := false
	for i := 0; i < len(hostPort); i++ {
		switch hostPort[i] {
		case '[':
			inside = true
		case ']':
			inside = false
		case ':':
			if !inside {
				host, port = hostPort[:i], hostPort[i+1:]
				i = len(hostPort)
			}
		}
	}
	if host == "" || !validPort(port) {
		return "", h, false
	}
	h, ok = parseWebHost(host)
	return scheme, h, ok
}

// stripTabsAndNewlines removes every ASCII tab and newline, as the URL parser
// does before it reads anything.
func stripTabsAndNewlines(s string) string {
	if !strings.ContainsAny(s, "\t\n\r") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
}

// cutScheme splits off a URL's scheme as the scheme state does: an ASCII letter,
// then letters, digits, '+', '-', '.', up to a ':'; the scheme in lower case.
func cutScheme(s string) (scheme, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return strings.ToLower(s[:i]), s[i+1:], true
		default:
			return "", s, false
		}
	}
	return "", s, false
}

// validPort is the port state's check: ASCII digits, at most 65535 (empty is no
// port).
func validPort(p string) bool {
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
		if n = n*10 + int(p[i]-'0'); n > 65535 {
			return false
		}
	}
	return true
}

// parseWebHost is the URL Standard's host parser for a special URL: an IPv6
// address in brackets, else the input percent-decoded, UTF-8 decoded, through
// domain to ASCII, checked for forbidden domain code points, and parsed as an IPv4
// address when it ends in a number.
func parseWebHost(input string) (webHost, bool) {
	if strings.HasPrefix(input, "[") {
		if !strings.HasSuffix(input, "]") || len(input) < 2 {
			return webHost{}, false
		}
		a, ok := parseIPv6(input[1 : len(input)-1])
		return webHost{kind: hostIPv6, v6: a}, ok
	}
	domain := percentDecode(input)
	if !utf8.ValidString(domain) {
		// UTF-8 decoding would put U+FFFD there, which UTS #46 disallows.
		return webHost{}, false
	}
	ascii, ok := domainToASCII(domain)
	if !ok {
		return webHost{}, false
	}
	for i := 0; i < len(ascii); i++ {
		if forbiddenDomainByte(ascii[i]) {
			return webHost{}, false
		}
	}
	if endsInANumber(ascii) {
		v4, ok := parseIPv4(ascii)
		return webHost{kind: hostIPv4, v4: v4}, ok
	}
	return webHost{kind: hostDomain, domain: ascii}, true
}

// percentDecode decodes every %XX (two hex digits) to its byte and leaves any
// other '%' as it is, as the URL Standard's percent-decode does.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// domainToASCII is the URL Standard's "domain to ASCII" with beStrict false: an
// ASCII domain with no label starting "xn--" is only lower-cased; anything else
// goes through UTS #46 ToASCII (hostProfile). An empty result is a failure.
func domainToASCII(domain string) (string, bool) {
	plain := true
	for i := 0; i < len(domain); i++ {
		if domain[i] >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		for _, label := range strings.Split(domain, ".") {
			if len(label) >= 4 && strings.EqualFold(label[:4], "xn--") {
				plain = false
				break
			}
		}
	}
	if plain {
		return asciiLower(domain), domain != ""
	}
	out, err := hostProfile.ToASCII(domain)
	if err != nil || out == "" {
		return "", false
	}
	return out, true
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// forbiddenDomainByte is a forbidden domain code point of the URL Standard: a
// forbidden host code point, a C0 control, '%' or DEL.
func forbiddenDomainByte(c byte) bool {
	return c <= 0x20 || c == 0x7f || strings.IndexByte(`#%/:<>?@[\]^|`, c) >= 0
}

// endsInANumber is the URL Standard's "ends in a number" checker: the last label
// (a trailing empty one dropped) is all digits or an IPv4 number ("0x7f").
func endsInANumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4 is the URL Standard's IPv4 parser: one to four dot-separated numbers,
// each decimal, hex ("0x") or octal (a leading "0"), the last filling the bytes the
// others leave ("127.1" is 127.0.0.1, "2130706433" is 127.0.0.1).
func parseIPv4(s string) (uint32, bool) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return 0, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return 0, false
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return 0, false
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return 0, false
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return uint32(v), true
}

// parseIPv4Number is the URL Standard's IPv4 number parser. A number too big for
// any IPv4 address (beyond 2^32) is a failure here, where the standard fails on it
// one step later.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case base == 16 && isHex(c):
			d = uint64(unhex(c))
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		if n = n*base + d; n > 1<<32 {
			// Still a number (the label is one), but never an address: keep
			// reading so that a later non-digit still makes it no number.
			n = 1<<32 + 1
		}
	}
	return n, true
}

// parseIPv6 is the URL Standard's IPv6 parser (no zone: '%' is a failure).
func parseIPv6(s string) ([8]uint16, bool) {
	var a [8]uint16
	p, piece, compress := 0, 0, -1
	at := func(i int) int {
		if i < len(s) {
			return int(s[i])
		}
		return -1
	}
	if at(p) == ':' {
		if at(p+1) != ':' {
			return a, false
		}
		p += 2
		piece++
		compress = piece
	}
	for at(p) != -1 {
		if piece == 8 {
			return a, false
		}
		if at(p) == ':' {
			if compress != -1 {
				return a, false
			}
			p++
			piece++
			compress = piece
			continue
		}
		value, length := 0, 0
		for length < 4 && at(p) != -1 && isHex(byte(at(p))) {
			value = value*16 + int(unhex(byte(at(p))))
			p++
			length++
		}
		if at(p) == '.' {
			if length == 0 {
				return a, false
			}
			p -= length
			if piece > 6 {
				return a, false
			}
			seen := 0
			for at(p) != -1 {
				v4 := -1
				if seen > 0 {
					if at(p) == '.' && seen < 4 {
						p++
					} else {
						return a, false
					}
				}
				if c := at(p); c < '0' || c > '9' {
					return a, false
				}
				for c := at(p); c >= '0' && c <= '9'; c = at(p) {
					switch {
					case v4 == -1:
						v4 = c - '0'
					case v4 == 0:
						return a, false
					default:
						v4 = v4*10 + c - '0'
					}
					if v4 > 255 {
						return a, false
					}
					p++
				}
				a[piece] = a[piece]<<8 | uint16(v4)
				seen++
				if seen == 2 || seen == 4 {
					piece++
				}
			}
			if seen != 4 {
				return a, false
			}
			break
		} else if at(p) == ':' {
			p++
			if at(p) == -1 {
				return a, false
			}
		} else if at(p) != -1 {
			return a, false
		}
		a[piece] = uint16(value)
		piece++
	}
	if compress != -1 {
		swaps := piece - compress
		piece = 7
		for piece != 0 && swaps > 0 {
			a[piece], a[compress+swaps-1] = a[compress+swaps-1], a[piece]
			piece--
			swaps--
		}
	} else if piece != 8 {
		return a, false
	}
	return a, true
}

func ipv4String(v uint32) string {
	return strconv.Itoa(int(v>>24)) + "." + strconv.Itoa(int(v>>16&0xff)) + "." + strconv.Itoa(int(v>>8&0xff)) + "." + strconv.Itoa(int(v&0xff))
}

// ipv6String is the URL Standard's IPv6 serializer: lower-case hex without
// leading zeros, the first longest run of two or more zero pieces as "::".
func ipv6String(a [8]uint16) string {
	compress, best := -1, 1
	for i := 0; i < 8; {
		if a[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && a[j] == 0 {
			j++
		}
		if j-i > best {
			compress, best = i, j-i
		}
		i = j
	}
	var b strings.Builder
	for i := 0; i < 8; i++ {
		if i == compress {
			if i == 0 {
				b.WriteString("::")
			} else {
				b.WriteString(":")
			}
			i += best - 1
			continue
		}
		b.WriteString(strconv.FormatUint(uint64(a[i]), 16))
		if i != 7 {
			b.WriteString(":")
		}
	}
	return b.String()
}

// hostKey is the form a host is compared in, for a rule's pattern and a call's
// value alike: a domain without its trailing dots (a name and its fully qualified
// spelling are the same host: `localhost.` is localhost, and `0x7f.1.` is read
// again as 127.0.0.1), an IPv4 address in dotted decimal, an IPv4-mapped
// (::ffff:a.b.c.d) or IPv4-compatible (::a.b.c.d) IPv6 address as that IPv4
// address, any other IPv6 address as the standard serialises it, without
// brackets. ok is false for a host that cannot be compared safely: a domain with
// an empty label (".localhost", "a..b"), and the unspecified addresses 0.0.0.0 and
// ::, which connect to this machine on Linux and macOS.
func hostKey(h webHost) (string, bool) {
	switch h.kind {
	case hostIPv4:
		return ipv4String(h.v4), h.v4 != 0
	case hostIPv6:
		a := h.v6
		if a[0]|a[1]|a[2]|a[3]|a[4] == 0 && (a[5] == 0xffff || a[5] == 0 && (a[6] != 0 || a[7] > 1)) {
			return hostKey(webHost{kind: hostIPv4, v4: uint32(a[6])<<16 | uint32(a[7])})
		}
		return ipv6String(a), a != [8]uint16{}
	}
	d := strings.TrimRight(h.domain, ".")
	if d == "" || strings.HasPrefix(d, ".") || strings.Contains(d, "..") {
		return "", false
	}
	if d != h.domain {
		again, ok := parseWebHost(d)
		if !ok {
			return "", false
		}
		return hostKey(again)
	}
	return d, true
}

// URLHost is the host a host matcher compares: the value read as a URL by the
// URL Standard ("https://" assumed when it has no scheme, "https:" before a value
// starting with a slash; a value "HOST:PORT..." is a host and a port, not a
// scheme), its host in the form rules are compared in (lower case, IDN labels in
// punycode after UTS #46 mapping, IPv4 in dotted decimal whatever its spelling, no
// trailing dot). ok is false, and the value cannot be compared safely, when the
// URL Standard's parser fails on it, its scheme is not http, https, ws or wss, the
// host is one hostKey refuses, or Go's net/url finds another host in it (or none).
func URLHost(s string) (string, bool) {
	if s == "" || !utf8.ValidString(s) {
		return "", false
	}
	s = withScheme(s)
	scheme, h, ok := webURLHost(s)
	if !ok || !specialSchemes[scheme] {
		return "", false
	}
	key, ok := hostKey(h)
	if !ok {
		return "", false
	}
	// The second reading: Go's net/url, its host put through the same host parser.
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || strings.ToLower(u.Scheme) != scheme {
		return "", false
	}
	gh := u.Hostname()
	if strings.Contains(gh, ":") {
		gh = "[" + gh + "]"
	}
	g, ok := parseWebHost(gh)
	if !ok {
		return "", false
	}
	if gk, ok := hostKey(g); !ok || gk != key {
		return "", false
	}
	return key, true
}

// withScheme puts "https://" before a value with no scheme ("docs.python.org/3",
// "localhost:8080/x": a name and a port, not the scheme "localhost"), and "https:"
// before one starting with a slash or backslash ("//host/x"). The scheme is looked
// for as the URL Standard does, after its leading C0 controls and spaces and its
// tabs and newlines, which both readings then see as they are.
func withScheme(s string) string {
	t := stripTabsAndNewlines(strings.TrimLeftFunc(s, func(r rune) bool { return r <= 0x20 }))
	if strings.HasPrefix(t, "/") || strings.HasPrefix(t, `\`) {
		return "https:" + s
	}
	scheme, rest, ok := cutScheme(t)
	if !ok {
		return "https://" + s
	}
	if _, special := specialSchemes[scheme]; special || scheme == "file" {
		return s
	}
	// "localhost:8080", "docs.python.org:443/x": digits after the colon, up to the
	// path, are a port.
	end := strings.IndexAny(rest, `/\?#`)
	if end < 0 {
		end = len(rest)
	}
	if end > 0 && strings.Trim(rest[:end], "0123456789") == "" {
		return "https://" + s
	}
	return s
}

// compileHost compiles one host pattern of a rule: "*." and a domain (any
// subdomain, not the domain itself), or a host read by the same host parser and
// put in the same form as a call's value (hostKey), so that a pattern 127.0.0.1
// also covers 2130706433, localhost. is localhost, and ::1 or [::1] is ::1.
func compileHost(s string) (hostPattern, error) {
	hp := hostPattern{}
	in := s
	if strings.HasPrefix(in, "*.") {
		hp.wildcard, in = true, in[2:]
	}
	bad := func(why string) (hostPattern, error) {
		return hostPattern{}, ruleError("host " + strconv.Quote(s) + " is not a host name" + why)
	}
	if in == "" || !utf8.ValidString(in) || strings.Contains(in, "*") {
		return bad(" (a leading *. is the only wildcard)")
	}
	if strings.Contains(in, ":") && !strings.HasPrefix(in, "[") {
		in = "[" + in + "]" // an IPv6 address written without brackets
	}
	h, ok := parseWebHost(in)
	if !ok {
		return bad("")
	}
	if hp.wildcard && h.kind != hostDomain {
		return bad(" (*. takes a domain name, not an IP address)")
	}
	key, ok := hostKey(h)
	if !ok && h.kind == hostDomain {
		return bad(" (an empty label)")
	}
	if !ok {
		// 0.0.0.0 or ::: a call's value never compares to it (it always cannot
		// be compared safely), so a deny or ask on it holds and an allow never
		// matches; keep the pattern as written.
		key = h.String()
	}
	hp.host, hp.suffix = key, "."+key
	return hp, nil
}
