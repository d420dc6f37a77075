package secrets

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"

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
// value of a Known of at least MinKnown bytes, as Find finds them.
func RedactWith(args json.RawMessage, known []Known) json.RawMessage {
	r := redactor{known: usable(known)}
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

// assignment finds NAME=value and NAME: value (in prose, shell, JSON, URL queries),
// whose NAME is then checked whole. Only the value's first character is consumed, so
// that "https://host/?token=…" also yields token.
var assignment = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.-]*)["']?\s*[=:]\s*["']?[^\s"',;&]`)
})

// shaped reports whether a string holds a secret shape anywhere (Audit.Value).
func shaped(s string) bool {
	if holdsShape([]byte(s)) {
		return true
	}
	for _, m := range assignment().FindAllStringSubmatch(s, -1) {
		if auditKeys.secret(m[1]) {
			return true
		}
	}
	return false
}
