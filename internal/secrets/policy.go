package secrets

import (
	"strings"
	"unicode"
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
	words := split(name, k.digitBreaks)
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
