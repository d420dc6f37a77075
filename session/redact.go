package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/airlock-mcp/airlock/trust"
)

// Redact returns args with secrets replaced, at any depth, for the audit log:
//
//   - the value of a key whose name is a secret word (after splitting the name into
//     words at separators and case changes: accessToken, X-Api-Key, MYSQL_PWD), never a
//     key that merely contains one (keywords, monkey, author);
//   - any string value (or key name) that holds a secret shape anywhere (Bearer …, ghp_…,
//     github_pat_…, sk-…, xox…-, AKIA…, a PEM private key, NAME=value where NAME is a
//     secret key name, URL userinfo with a password).
//
// A redacted value becomes "[redacted sha256:HEX]": the SHA-256 of the string's UTF-8
// bytes, or, for a secret key whose value is not a string, of the value's JSON text as
// sent. The log so still proves what was sent without holding it. Invalid JSON is
// replaced whole: the log never holds arguments it could not read.
func Redact(args json.RawMessage) json.RawMessage {
	out, ok := redactRaw(args, 0)
	if !ok {
		return json.RawMessage(`"[unparseable arguments redacted]"`)
	}
	return out
}

// redactRaw redacts raw at nesting depth; each level parses its subtree again, so
// the depth is bounded by trust.MaxArgsDepth (what Manager.Call lets through): the
// work is at most that many times the size of the arguments.
func redactRaw(raw json.RawMessage, depth int) (json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || depth > trust.MaxArgsDepth {
		return nil, false
	}
	switch raw[0] {
	case '{':
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil, false
		}
		out := make(map[string]json.RawMessage, len(obj))
		for k, v := range obj {
			if SecretShaped(k) {
				// a secret sent as a key name: the key is replaced by its hash
				sum := sha256.Sum256([]byte(k))
				k = "[redacted sha256:" + hex.EncodeToString(sum[:]) + "]"
			}
			if IsSecretKey(k) {
				out[k] = redactedMarker(v)
				continue
			}
			r, ok := redactRaw(v, depth+1)
			if !ok {
				return nil, false
			}
			out[k] = r
		}
		return marshalRaw(out)
	case '[':
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) != nil {
			return nil, false
		}
		for i, v := range arr {
			r, ok := redactRaw(v, depth+1)
			if !ok {
				return nil, false
			}
			arr[i] = r
		}
		return marshalRaw(arr)
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		if SecretShaped(s) {
			return redactedMarker(raw), true
		}
		return raw, true
	}
	if !json.Valid(raw) {
		return nil, false
	}
	return raw, true
}

func marshalRaw(v any) (json.RawMessage, bool) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return nil, false
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), true
}

// redactedMarker is the JSON string that stands for a redacted value: the SHA-256 of
// a string's own bytes, or of any other value's JSON text as sent.
func redactedMarker(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	data := []byte(raw)
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		data = []byte(s)
	}
	sum := sha256.Sum256(data)
	return json.RawMessage(`"[redacted sha256:` + hex.EncodeToString(sum[:]) + `]"`)
}

// secretWords are key-name words that mark a secret wherever they stand in the name.
var secretWords = map[string]bool{
	"token": true, "tokens": true, "secret": true, "secrets": true,
	"password": true, "passwords": true, "passwd": true, "passphrase": true, "pwd": true,
	"pass": true, "apikey": true, "authorization": true, "auth": true, "cookie": true,
	"cookies": true, "otp": true, "totp": true, "credential": true, "credentials": true,
	"privatekey": true, "bearer": true, "jwt": true,
}

// secretPairs are two adjacent words that together mark a secret (api_key,
// private_key, access_key …); "key" alone names a lookup key as often as a secret.
var secretPairs = map[[2]string]bool{
	{"api", "key"}: true, {"private", "key"}: true, {"access", "key"}: true,
	{"secret", "key"}: true, {"signing", "key"}: true, {"encryption", "key"}: true,
	{"ssh", "key"}: true, {"client", "key"}: true, {"master", "key"}: true,
	{"session", "key"}: true, {"session", "id"}: true,
}

// IsSecretKey reports whether a key name is a secret's name: split into words at
// anything but letters and digits and at case changes (accessToken, OAuthToken,
// X-Api-Key), lower-cased, it holds a secret word or a secret pair of words. A word
// that merely contains one (keywords, monkey, author, tokenizer) does not count.
func IsSecretKey(k string) bool {
	words := keyWords(k)
	for i, w := range words {
		if secretWords[w] {
			return true
		}
		if i > 0 && secretPairs[[2]string{words[i-1], w}] {
			return true
		}
	}
	return false
}

// keyWords splits a key name into lower-case words.
func keyWords(k string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(k)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && i > 0 && len(cur) > 0 {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			// a lower-to-upper change (accessToken), or the last capital of a run
			// before a lower-case letter (OAuthToken: O, Auth, Token)
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// secretShapes are value patterns that are secrets wherever they appear.
var secretShapes = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i:\bbearer\s+[A-Za-z0-9._~+/=-]{8,})` +
		`|\bgh[pousr]_[A-Za-z0-9]{20,}` +
		`|\bgithub_pat_[A-Za-z0-9_]{20,}` +
		`|\bsk-[A-Za-z0-9_-]{16,}` +
		`|\bxox[abprsoe]-[A-Za-z0-9-]{10,}` +
		`|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b` +
		`|-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----` +
		`|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}` +
		`|://[^/\s:@]+:[^/\s@]+@`)
})

// assignment finds NAME=value and NAME: value (in prose, shell, JSON, URL queries),
// whose NAME is then checked whole. Only the value's first character is consumed, so
// that "https://host/?token=…" also yields token.
var assignment = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.-]*)["']?\s*[=:]\s*["']?[^\s"',;&]`)
})

// SecretShaped reports whether a string holds a secret shape anywhere (see Redact).
func SecretShaped(s string) bool {
	if secretShapes().MatchString(s) {
		return true
	}
	for _, m := range assignment().FindAllStringSubmatch(s, -1) {
		if IsSecretKey(m[1]) {
			return true
		}
	}
	return false
}
