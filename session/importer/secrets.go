package importer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/airlock-mcp/airlock/internal/secrets"
)

// flagSecret reports whether a command-line flag's value is a secret: a secret key,
// or -p (mysql, psql and others take the password there; a port mapping that is not a
// secret only costs an export).
func flagSecret(flag string) bool {
	return strings.TrimLeft(flag, "-") == "p" || secrets.Import.Key(flag)
}

// nonSecretHeaders are header names whose values are copied as they are; any other
// header with a non-empty value is taken out (custom headers carry tenant keys,
// session ids and signatures under every name).
var nonSecretHeaders = map[string]bool{
	"accept": true, "accept-encoding": true, "accept-language": true, "cache-control": true,
	"content-type": true, "user-agent": true, "mcp-protocol-version": true, "prefer": true,
	"x-request-id": true, "x-correlation-id": true,
}

// span is a secret found inside a longer value: value[start:end], and the key it was
// stored under ("" when it was found by its look).
type span struct {
	start, end int
	key        string
}

// assignRE finds NAME=VALUE inside a longer string: shell assignments (sh -c
// "export API_KEY=…; MYSQL_PWD=… cmd") and connection-string pairs ("User Id=app;
// Password=…;"). flagRE finds --flag=VALUE and --flag VALUE. Group 1 is the key,
// group 2 the quoted or bare value.
var (
	inlineValue = `('[^']*'|"(?:[^"\\]|\\.)*"|[^\s;&|)'"]*)`
	assignRE    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:^|[\s;&|(` + "`" + `])(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*(?: [A-Za-z][A-Za-z0-9_]*)?)\s*=\s*` + inlineValue)
	})
	flagRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:^|\s)(-{1,2}[A-Za-z][A-Za-z0-9_.-]*)(?:=|\s+)` + inlineValue)
	})
)

// inlineSecrets returns the spans of v that are secrets inside a longer string: the
// values of assignments, connection-string pairs and flags under secret keys, and
// tokens that look like credentials. Quotes around a value stay outside its span.
func inlineSecrets(v string) []span {
	var out []span
	for _, re := range []*regexp.Regexp{assignRE(), flagRE()} {
		for _, m := range re.FindAllStringSubmatchIndex(v, -1) {
			key := v[m[2]:m[3]]
			start, end := m[4], m[5]
			if end-start >= 2 && (v[start] == '\'' || v[start] == '"') {
				start, end = start+1, end-1
			}
			val := v[start:end]
			secret := isSecret(key, val)
			if re == flagRE() {
				secret = flagSecret(key) && !strings.HasPrefix(val, "-")
			}
			if secret && val != "" && !strings.Contains(val, "${") {
				out = append(out, span{start, end, strings.TrimLeft(key, "-")})
			}
		}
	}
	// Tokens that are credentials by their look, wherever they are.
	i := 0
	for _, t := range strings.FieldsFunc(v, func(r rune) bool { return !secrets.TokenChar(r) }) {
		j := strings.Index(v[i:], t) + i
		if secrets.ImportToken(t) {
			out = append(out, span{j, j + len(t), ""})
		}
		i = j + len(t)
	}
	return out
}

// jsonSecrets returns the spans of a JSON text's values that are secrets: a string or
// number under a secret key, or a string that looks like a credential. The span of a
// string is inside its quotes, as written (escapes included), so putting it back
// restores the text exactly. nil when v is not a JSON object or array.
func jsonSecrets(v string) []span {
	t := strings.TrimSpace(v)
	if t == "" || t[0] != '{' && t[0] != '[' || !json.Valid([]byte(t)) {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	type frame struct {
		object  bool
		wantKey bool
		key     string
	}
	var stack []frame
	var out []span
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		end := int(dec.InputOffset())
		top := len(stack) - 1
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if top >= 0 && stack[top].object {
					stack[top].wantKey = true
				}
				stack = append(stack, frame{object: d == '{', wantKey: d == '{'})
			default:
				stack = stack[:top]
			}
			continue
		}
		if top >= 0 && stack[top].object && stack[top].wantKey {
			stack[top].key, _ = tok.(string)
			stack[top].wantKey = false
			continue
		}
		key := ""
		if top >= 0 && stack[top].object {
			key = stack[top].key
			stack[top].wantKey = true
		}
		switch x := tok.(type) {
		case string:
			if x == "" || strings.Contains(x, "${") || !(secrets.Import.Key(key) || secrets.Import.Value(x)) {
				continue
			}
			// The literal ends at end with its closing quote; find its opening one.
			start := end - 2
			for ; start >= 0; start-- {
				if v[start] == '"' && !escaped(v, start) {
					break
				}
			}
			out = append(out, span{start + 1, end - 1, key})
		case json.Number:
			if secrets.Import.Key(key) {
				out = append(out, span{end - len(x.String()), end, key})
			}
		}
	}
}

// escaped reports whether the byte at i is preceded by an odd number of backslashes.
func escaped(v string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && v[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// isSecret reports whether the value under key must not be copied in clear: a secret
// by its key's name or its own look (secrets.Import).
func isSecret(key, v string) bool {
	return v != "" && (secrets.Import.Key(key) || secrets.Import.Value(v))
}

// varName turns parts into an environment variable name: upper case, every run of
// characters other than A-Z, 0-9 and _ made one _, never starting with a digit.
func varName(parts ...string) string {
	var b strings.Builder
	under := false
	for _, p := range parts {
		for _, r := range strings.ToUpper(p) {
			if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				b.WriteRune(r)
				under = false
			} else if b.Len() > 0 && !under {
				b.WriteByte('_')
				under = true
			}
		}
		if b.Len() > 0 && !under {
			b.WriteByte('_')
			under = true
		}
	}
	s := strings.TrimRight(b.String(), "_")
	if s == "" {
		return "SECRET"
	}
	if s[0] >= '0' && s[0] <= '9' {
		s = "_" + s
	}
	return s
}

// validVar reports whether s can be used in ${NAME}.
func validVar(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// vault holds the secrets taken out of a source file, by the variable that now
// stands for each. A Result holds it behind a pointer, which fmt prints as an
// address, and it formats as a count only: printing a Result by mistake leaks
// nothing.
type vault struct{ m map[string]string }

func newVault() *vault { return &vault{m: map[string]string{}} }

// String says how many secrets there are, never what they are.
func (v *vault) String() string { return fmt.Sprintf("%d secrets", len(v.m)) }

// Format prints String for every verb.
func (v *vault) Format(f fmt.State, _ rune) { fmt.Fprint(f, v.String()) }
