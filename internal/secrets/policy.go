package secrets

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Policy is one reading of which key names and values are secrets: Audit or Import
// (see the package doc for their words and why they differ).
type Policy struct {
	keys  keyWords
	value func(string) bool
}

// Key reports whether a key name (a JSON key, an env name, a header, a flag) is a
// secret's name under p.
func (p Policy) Key(name string) bool { return p.keys.secret(name) }

// Value reports whether a value is a secret by its content alone under p.
func (p Policy) Value(v string) bool { return p.value(v) }

// Audit is the audit log's policy: key names matched as whole words or pairs of
// words, values read for secret shapes anywhere in them (Shaped).
var Audit = Policy{keys: auditKeys, value: shaped}

// auditKeys are the audit log's words for key names.
var auditKeys = keyWords{
	words: map[string]bool{
		"token": true, "tokens": true, "secret": true, "secrets": true,
		"password": true, "passwords": true, "passwd": true, "passphrase": true, "pwd": true,
		"pass": true, "apikey": true, "authorization": true, "auth": true, "cookie": true,
		"cookies": true, "otp": true, "totp": true, "credential": true, "credentials": true,
		"privatekey": true, "bearer": true, "jwt": true,
	},
	// "key" alone names a lookup key as often as a secret.
	pairs: map[[2]string]bool{
		{"api", "key"}: true, {"private", "key"}: true, {"access", "key"}: true,
		{"secret", "key"}: true, {"signing", "key"}: true, {"encryption", "key"}: true,
		{"ssh", "key"}: true, {"client", "key"}: true, {"master", "key"}: true,
		{"session", "key"}: true, {"session", "id"}: true,
	},
	digitBreaks: true,
}

// Import is `airlock import`'s policy: broad key words, also found inside a longer
// word, and values read for credentials by their look (credential).
var Import = Policy{keys: importKeys, value: credential}

// importKeys are the importer's words for key names (env names, header names, flags,
// query parameters). A false positive costs an export, a miss leaks.
var importKeys = keyWords{
	words: map[string]bool{
		"token": true, "tokens": true, "secret": true, "secrets": true,
		"password": true, "passwd": true, "passphrase": true, "pass": true,
		"key": true, "keys": true, "apikey": true, "auth": true, "authorization": true,
		"credential": true, "credentials": true, "cookie": true, "pat": true,
		"bearer": true, "jwt": true,
		// Short and sideways names for the same things.
		"pwd": true, "pw": true, "passcode": true, "pin": true, "otp": true, "totp": true,
		"login": true, "session": true, "sid": true, "signature": true, "sig": true,
	},
	inside: []string{"token", "secret", "password", "passwd", "passphrase", "apikey", "accountkey", "credential", "authorization"},
}

// keyWords is a policy's words for key names.
type keyWords struct {
	// words mark a secret wherever they stand in the name.
	words map[string]bool
	// pairs are two adjacent words that together mark a secret.
	pairs map[[2]string]bool
	// inside are found inside any one word, however long.
	inside []string
	// digitBreaks splits a word where a capital follows a digit (s3Key).
	digitBreaks bool
}

// secret reports whether name holds one of k's words, pairs or inside words.
func (k keyWords) secret(name string) bool {
	if secret, ok := k.asciiSecret(name); ok {
		return secret
	}
	return k.secretIn(split(name, k.digitBreaks))
}

// asciiSecret is secret without allocating, for a name of ASCII bytes in at most
// maxASCIIWords words of at most maxASCIIWord bytes (nearly every key name): the
// words split finds, lower-cased in place. ok is false for any other name.
func (k keyWords) asciiSecret(name string) (secret, ok bool) {
	var spans [maxASCIIWords][2]int
	n := 0
	add := func(start, end int) bool {
		if n == len(spans) || end-start > maxASCIIWord {
			return false
		}
		spans[n] = [2]int{start, end}
		n++
		return true
	}
	start := -1 // where the word being read starts, or -1 between words
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= utf8.RuneSelf:
			return false, false
		case !asciiLetter(c) && !asciiDigit(c):
			if start >= 0 && !add(start, i) {
				return false, false
			}
			start = -1
			continue
		case start >= 0 && asciiUpper(c):
			// split's case changes; the word so far is name[start:i], all ASCII.
			last := name[i-1]
			nextLower := i+1 < len(name) && asciiLower(name[i+1])
			if asciiLower(last) || k.digitBreaks && asciiDigit(last) || asciiUpper(last) && nextLower {
				if !add(start, i) {
					return false, false
				}
				start = i
			}
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 && !add(start, len(name)) {
		return false, false
	}
	var bufs [2][maxASCIIWord]byte
	var prev []byte
	for j, sp := range spans[:n] {
		w := bufs[j%2][:sp[1]-sp[0]]
		for i := range w {
			c := name[sp[0]+i]
			if asciiUpper(c) {
				c += 'a' - 'A'
			}
			w[i] = c
		}
		if k.words[string(w)] {
			return true, true
		}
		if j > 0 && k.pairs[[2]string{string(prev), string(w)}] {
			return true, true
		}
		for _, c := range k.inside {
			if strings.Contains(string(w), c) {
				return true, true
			}
		}
		prev = w
	}
	return false, true
}

// The bounds of asciiSecret's words: a longer name goes through split.
const (
	maxASCIIWords = 16
	maxASCIIWord  = 32
)

func asciiLetter(c byte) bool { return asciiUpper(c) || asciiLower(c) }
func asciiUpper(c byte) bool  { return 'A' <= c && c <= 'Z' }
func asciiLower(c byte) bool  { return 'a' <= c && c <= 'z' }
func asciiDigit(c byte) bool  { return '0' <= c && c <= '9' }

// secretIn reports whether the words of a name hold one of k's words, pairs or
// inside words.
func (k keyWords) secretIn(words []string) bool {
	for i, w := range words {
		if k.words[w] {
			return true
		}
		if i > 0 && k.pairs[[2]string{words[i-1], w}] {
			return true
		}
		for _, c := range k.inside {
			if strings.Contains(w, c) {
				return true
			}
		}
	}
	return false
}

// split splits a key name into lower-case words: at anything but letters and digits,
// and at case changes (a lower-case letter, or with digitBreaks a digit, then a
// capital: accessToken; the last capital of a run before a lower-case letter:
// OAuthToken gives o, auth, token).
func split(key string, digitBreaks bool) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(key)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && len(cur) > 0 {
			last := cur[len(cur)-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(last) || digitBreaks && unicode.IsDigit(last) || unicode.IsUpper(last) && nextLower {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}
