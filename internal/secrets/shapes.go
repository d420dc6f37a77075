package secrets

import (
	"bytes"
	"math/bits"
	"regexp"
	"strings"
	"sync"
)

// shape is one kind of value that is a secret wherever it appears: its name in the
// words a question uses, how a match starts, its expression, and how much of a
// match a mask keeps.
type shape struct {
	// name completes "something shaped like …".
	name string
	// lit starts every match (any case when fold); word says the byte before a
	// match is not a word character (a \b before lit).
	lit        string
	fold, word bool
	// then, when set, holds every byte that can follow lit in a match: a cheap test
	// before the expression runs.
	then string
	// expr matches from lit on (lit included), anchored where lit starts.
	expr string
	// run, when set, holds the bytes of the run expr reads right after lit, which
	// must end at a byte outside it: when expr fails at i, it fails at every start
	// inside that run too, so scan tries the next start past the run. Without it a
	// string of many starts in one long run ("eyJ-eyJ-…" with no '.') costs the
	// square of its length.
	run string
	// keep is how many bytes at the start of a match are a published format, not
	// the secret, and stay visible in a mask ("ghp_"); keepFn, when set, decides.
	keep   int
	keepFn func(m []byte) int
	// end is where the secret of a match at s[a:b] ends; nil: the match runs on over
	// token characters (TokenChar), so that a JWT's signature or the rest of a long
	// key is masked with its start.
	end func(s []byte, a, b int, c *endCache) int
}

// shapes is the one table of secret shapes: the audit log redacts a value that holds
// any of them (Audit.Value) and Find names them in a call's arguments. The order is
// the order scan tries shapes that start at one byte.
var shapes = []shape{
	{name: "a bearer token", lit: "bearer", fold: true, word: true, then: " \t\n\r\f\v", expr: `(?i:bearer\s+[A-Za-z0-9._~+/=-]{8,})`, keepFn: afterScheme},
	{name: "a GitHub token", lit: "gh", word: true, then: "pousr", expr: `gh[pousr]_[A-Za-z0-9]{20,}`, keep: len("ghp_")},
	{name: "a GitHub token", lit: "github_pat_", word: true, expr: `github_pat_[A-Za-z0-9_]{20,}`, keep: len("github_pat_")},
	{name: "an API secret key (sk-)", lit: "sk-", word: true, then: keyChars, expr: `sk-[A-Za-z0-9_-]{16,}`, keep: len("sk-")},
	{name: "a Slack token", lit: "xox", word: true, then: "abprsoe", expr: `xox[abprsoe]-[A-Za-z0-9-]{10,}`, keep: len("xoxb-")},
	{name: "an AWS access key", lit: "AKIA", word: true, expr: `AKIA[0-9A-Z]{16}\b`, keep: len("AKIA")},
	{name: "an AWS access key", lit: "ASIA", word: true, expr: `ASIA[0-9A-Z]{16}\b`, keep: len("ASIA")},
	{name: "a private key", lit: "-----BEGIN ", expr: `-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`, keepFn: func(m []byte) int { return len(m) }, end: pemEnd},
	{name: "a JSON Web Token", lit: "eyJ", word: true, then: keyChars, expr: `eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}`, run: keyChars, keep: len("eyJ")},
	{name: "a URL with a password", lit: "://", expr: `://[^/\s:@]+:[^/\s@]+@`, keep: len("://"), end: func(_ []byte, _, b int, _ *endCache) int { return b - 1 }},
}

// keyChars are the bytes of a key after its prefix: letters, digits, '_' and '-'.
const keyChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

// compiledShapes are the shapes' expressions, each anchored at its start.
var compiledShapes = sync.OnceValue(func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(shapes))
	for i, s := range shapes {
		out[i] = regexp.MustCompile(`^(?:` + s.expr + `)`)
	}
	return out
})

// startsAt marks, for each byte, the shapes whose lit can start with it.
var startsAt = sync.OnceValue(func() (t [256]uint16) {
	for i, s := range shapes {
		c := s.lit[0]
		t[c] |= 1 << i
		if s.fold {
			t[c&^0x20] |= 1 << i
		}
	}
	return t
})

// match is one shape found in a string: shapes[shape] at s[a:b].
type match struct{ shape, a, b int }

// scan calls f with each match in s, each shape's leftmost first and never
// overlapping another of the same shape, until f returns false. It reads s once:
// a shape's expression runs only where its lit stands. This is what one expression
// joining every shape with \b around them would find, without its cost (a regular
// expression over a megabyte of text costs close to a second).
func scan(s []byte, f func(m match) bool) {
	res := compiledShapes()
	starts := startsAt()
	var next [16]int // per shape, where its next match may start
	for i := 0; i < len(s); i++ {
		set := starts[s[i]]
		for set != 0 {
			k := bits.TrailingZeros16(set)
			set &^= 1 << k
			sh := &shapes[k]
			if i < next[k] || !hasLit(s[i:], sh.lit, sh.fold) || sh.word && i > 0 && wordByte(s[i-1]) ||
				sh.then != "" && (i+len(sh.lit) >= len(s) || strings.IndexByte(sh.then, s[i+len(sh.lit)]) < 0) {
				continue
			}
			loc := res[k].FindIndex(s[i:])
			if loc == nil {
				if sh.run != "" {
					next[k] = runEnd(s, i+len(sh.lit), sh.run)
				}
				continue
			}
			next[k] = i + max(loc[1], 1)
			if !f(match{shape: k, a: i, b: i + loc[1]}) {
				return
			}
		}
	}
}

// runEnd is the end of the run of bytes in set that starts at s[i].
func runEnd(s []byte, i int, set string) int {
	for i < len(s) && strings.IndexByte(set, s[i]) >= 0 {
		i++
	}
	return i
}

// hasLit reports whether s starts with lit (in any case when fold).
func hasLit(s []byte, lit string, fold bool) bool {
	if len(s) < len(lit) {
		return false
	}
	if fold {
		return bytes.EqualFold(s[:len(lit)], []byte(lit))
	}
	return string(s[:len(lit)]) == lit
}

// wordByte reports whether c is a word character as \b reads it: an ASCII letter,
// digit or '_'.
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// holdsShape reports whether s holds any shape.
func holdsShape(s []byte) bool {
	found := false
	scan(s, func(match) bool { found = true; return false })
	return found
}

// afterScheme keeps "Bearer " (the scheme and the spaces after it) visible.
func afterScheme(m []byte) int {
	i := len("bearer")
	for i < len(m) && (m[i] == ' ' || m[i] == '\t' || m[i] == '\n' || m[i] == '\r' || m[i] == '\f' || m[i] == '\v') {
		i++
	}
	return i
}

// endCache keeps, across the matches of one string, the last end an end function
// searched for: many matches before one far end (PEM headers with no END line)
// then cost one search, not one each.
type endCache struct {
	// from is where the last search started (-1: none yet), at where the END line
	// it found starts (len(s): none), end its result.
	from, at, end int
}

// pemEnd is the end of a PEM block that starts at s[a:b]: past its END line, or the
// end of the string when it has none. The first END line at or after b is the same
// for every b from c.from up to where it starts, so c answers those.
func pemEnd(s []byte, _, b int, c *endCache) int {
	if c.from >= 0 && c.from <= b && b <= c.at {
		return c.end
	}
	c.from, c.at, c.end = b, len(s), len(s)
	i := bytes.Index(s[b:], []byte("-----END "))
	if i < 0 {
		return c.end
	}
	c.at = b + i
	j := c.at + len("-----END ")
	if k := bytes.Index(s[j:], []byte("-----")); k >= 0 {
		c.end = j + k + len("-----")
	}
	return c.end
}

// secretEnd is where the secret of shape sh matched at s[a:b] ends.
func (sh *shape) secretEnd(s []byte, a, b int, c *endCache) int {
	if sh.end != nil {
		return sh.end(s, a, b, c)
	}
	for b < len(s) && s[b] < 0x80 && TokenChar(rune(s[b])) {
		b++
	}
	return b
}

// visible is how many bytes of the match m stay visible in a mask.
func (sh *shape) visible(m []byte) int {
	if sh.keepFn != nil {
		return sh.keepFn(m)
	}
	return min(sh.keep, len(m))
}
