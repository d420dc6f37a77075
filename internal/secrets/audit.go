package secrets

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/airlock-mcp/airlock/trust"
)

// Redact returns args with secrets replaced, at any depth, for the audit log:
//
//   - the value of a key whose name is a secret word (Audit.Key: accessToken,
//     X-Api-Key, MYSQL_PWD), never a key that merely contains one (keywords, monkey,
//     author);
//   - any string value (or key name) that holds a secret shape anywhere (Audit.Value:
//     Bearer …, ghp_…, github_pat_…, sk-…, xox…-, AKIA…, a PEM private key, NAME=value
//     where NAME is a secret key name, URL userinfo with a password).
//
// A redacted value becomes "[redacted sha256:HEX]": the SHA-256 of the string's UTF-8
// bytes, or, for a secret key whose value is not a string, of the value's JSON text as
// sent. The log so still proves what was sent without holding it. Invalid JSON is
// replaced whole: the log never holds arguments it could not read.
func Redact(args json.RawMessage) json.RawMessage { return RedactWith(args, nil) }

// RedactWith is Redact that also redacts any string value (or key name) holding the
// value of a Known of at least MinKnown bytes, as Find finds them, and any number
// that holds one as Find finds it there (hashed as its JSON text, as sent).
//
// Arguments with nothing to redact are returned as they are (without surrounding
// space), read once and not rebuilt: a large argument is common and a secret in it
// rare. Otherwise each object is rebuilt with its keys in sorted order.
func RedactWith(args json.RawMessage, known []Known) json.RawMessage {
	r := redactor{known: usable(known)}
	if r.clean(args) {
		return bytes.TrimSpace(args)
	}
	out, ok := r.redactRaw(args, 0)
	if !ok {
		return json.RawMessage(`"[unparseable arguments redacted]"`)
	}
	return out
}

// redactor redacts the secret shapes and the values of known.
type redactor struct{ known []Known }

// secret reports whether s holds a secret shape or a known value, in the clear or
// in one of its decodings (encoded.go).
func (r redactor) secret(s string) bool {
	if shaped(s) || slices.ContainsFunc(r.known, func(k Known) bool { return strings.Contains(s, k.Value) }) {
		return true
	}
	w := walker{known: r.known}
	found := false
	decodings([]byte(s), func(d *decoding) bool {
		w.secrets(d.b, d, func(string, bool, span) { found = true })
		return !found
	})
	return found
}

// clean reports whether redactRaw would leave raw as it is, up to the order of its
// keys and its spaces: it reads to the end, as deep as redactRaw does, no object
// repeats a key (redactRaw would keep the last), no key name is a secret word or
// holds a secret, no string value holds one and no number holds a Known's value.
// Its strings are decoded as encoding/json decodes them (jsonlex), so each is
// judged as redactRaw judges it.
func (r redactor) clean(raw json.RawMessage) bool {
	type member struct {
		object int
		key    string
	}
	clean := true
	var keys map[member]bool
	w := walker{b: raw, known: r.known, noPaths: true}
	w.visit = func(b []byte, key bool, _, _ int) bool {
		s := string(b)
		clean = !(key && auditKeys.secret(s)) && !r.secret(s)
		if clean && key {
			if keys == nil {
				keys = make(map[member]bool)
			}
			m := member{w.inObject, s}
			clean = !keys[m]
			keys[m] = true
		}
		return clean
	}
	w.numbers = func(lit []byte, _, _ int) bool {
		clean = !r.knownIn(lit)
		return clean
	}
	return w.run() == "" && clean
}

// redactRaw redacts raw at nesting depth; each level parses its subtree again, so
// the depth is bounded by trust.MaxArgsDepth (what Manager.Call lets through): the
// work is at most that many times the size of the arguments.
func (r redactor) redactRaw(raw json.RawMessage, depth int) (json.RawMessage, bool) {
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
			if r.secret(k) {
				// a secret sent as a key name: the key is replaced by its hash
				sum := sha256.Sum256([]byte(k))
				k = "[redacted sha256:" + hex.EncodeToString(sum[:]) + "]"
			}
			if auditKeys.secret(k) {
				out[k] = redactedMarker(v)
				continue
			}
			red, ok := r.redactRaw(v, depth+1)
			if !ok {
				return nil, false
			}
			out[k] = red
		}
		return marshalRaw(out)
	case '[':
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) != nil {
			return nil, false
		}
		for i, v := range arr {
			red, ok := r.redactRaw(v, depth+1)
			if !ok {
				return nil, false
			}
			arr[i] = red
		}
		return marshalRaw(arr)
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		if r.secret(s) {
			return redactedMarker(raw), true
		}
		return raw, true
	}
	if !json.Valid(raw) {
		return nil, false
	}
	if (raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9') && r.knownIn(raw) {
		return redactedMarker(raw), true
	}
	return raw, true
}

// knownIn reports whether b (a number's literal) holds the value of a Known, as
// Find finds it there (numberKnown).
func (r redactor) knownIn(b []byte) bool { return numberHoldsKnown(b, r.known) }

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

// assignmentKeys yields the NAME of every NAME=value and NAME: value in s (in prose,
// shell, JSON, URL queries), whose NAME is then checked whole, until yield returns
// false. It finds what the regular expression
//
//	([A-Za-z_][A-Za-z0-9_.-]*)["']?\s*[=:]\s*["']?[^\s"',;&]
//
// finds, match after match, its first group: only the value's first character is
// consumed, so "https://host/?token=…" also yields token. A scan of its own, because
// Go's regexp engine took 35 ms for a 100 KB argument (the expression's keys are
// compared with this scan's by TestAssignmentKeys_AsTheExpressionFindsThem).
func assignmentKeys(s string, yield func(string) bool) {
	for pos := 0; pos < len(s); {
		// The identifier run containing or after pos; the match starts at its first
		// letter or underscore at or after pos, and every start in one run ends there.
		if !identChar(s[pos]) {
			pos++
			continue
		}
		end := pos
		for end < len(s) && identChar(s[end]) {
			end++
		}
		start := pos
		for start < end && !identStart(s[start]) {
			start++
		}
		if start == end {
			pos = end
			continue
		}
		if b, ok := assignmentTail(s, end); ok {
			if !yield(s[start:end]) {
				return
			}
			pos = b
			continue
		}
		pos = end
	}
}

// assignmentTail matches ["']?\s*[=:]\s*["']?[^\s"',;&] at s[i:], returning the
// end of the match. Each optional part is taken whenever it can be: not taking it
// leaves a character the next part cannot match.
func assignmentTail(s string, i int) (int, bool) {
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	i = skipRESpace(s, i)
	if i >= len(s) || s[i] != '=' && s[i] != ':' {
		return 0, false
	}
	i = skipRESpace(s, i+1)
	if i+1 < len(s) && (s[i] == '"' || s[i] == '\'') && !valueExcluded(s[i+1]) {
		i++
	}
	if i >= len(s) || valueExcluded(s[i]) {
		return 0, false
	}
	_, w := utf8.DecodeRuneInString(s[i:])
	return i + w, true
}

func identStart(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }

func identChar(c byte) bool {
	return identStart(c) || '0' <= c && c <= '9' || c == '.' || c == '-'
}

// reSpace is \s of Go's regular expressions: no vertical tab.
func reSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

func skipRESpace(s string, i int) int {
	for i < len(s) && reSpace(s[i]) {
		i++
	}
	return i
}

// valueExcluded is the set a value's first character is not in: \s " ' , ; &.
func valueExcluded(c byte) bool {
	return reSpace(c) || c == '"' || c == '\'' || c == ',' || c == ';' || c == '&'
}

// shaped reports whether a string holds a secret shape anywhere (Audit.Value).
func shaped(s string) bool {
	if holdsShape([]byte(s)) {
		return true
	}
	found := false
	assignmentKeys(s, func(key string) bool {
		found = auditKeys.secret(key)
		return !found
	})
	return found
}
