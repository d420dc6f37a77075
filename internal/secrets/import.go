package secrets

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// secretPrefixes start values that are credentials whatever key holds them: the
// published formats of common API keys and tokens.
var secretPrefixes = []string{
	"sk-", "sk_", "rk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-",
	"xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xapp-", "AKIA", "ASIA", "AIza", "ya29.",
	"eyJ", "npm_", "pypi-", "hf_", "shpat_", "shpss_", "dop_v1_", "lin_api_", "ntn_",
	"secret_", "figd_", "sq0atp-", "SG.", "pk_live_", "ATATT",
}

// opaqueRE matches a long run of token characters: what a generated secret looks
// like. It must also hold a letter and a digit (see ImportToken).
var opaqueRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9+/=_\-.~]{24,}$`) })

// schemeRE matches an Authorization scheme followed by its credentials.
var schemeRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?i)(bearer|basic|token|apikey|api-key|digest)\s+\S`)
})

// embeddedSchemeRE finds "Bearer TOKEN" inside a longer value.
var embeddedSchemeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}`) })

// credential reports whether v looks like a credential by its content alone
// (Import.Value): an Authorization scheme with credentials, a URL with a password, or
// a token with a published key prefix or of a generated look, alone or inside a longer
// value (the Bearer token in a JSON string of headers).
func credential(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" {
		return false
	}
	if schemeRE().MatchString(v) || embeddedSchemeRE().MatchString(v) {
		return true
	}
	if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.User != nil {
		if _, ok := u.User.Password(); ok {
			return true
		}
	}
	if ImportToken(v) {
		return true
	}
	for _, t := range strings.FieldsFunc(v, func(r rune) bool { return !TokenChar(r) }) {
		if t != v && ImportToken(t) {
			return true
		}
	}
	return false
}

// TokenChar reports whether r can be part of a token (ImportToken): ASCII letters,
// digits and + / = _ - . ~.
func TokenChar(r rune) bool {
	return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("+/=_-.~", r)
}

// ImportToken reports whether one token (a run of TokenChar) looks like a credential
// to the importer: a published key prefix and at least 8 more characters, or 24 or
// more token characters holding a letter and a digit that do not start a path.
func ImportToken(t string) bool {
	for _, p := range secretPrefixes {
		if strings.HasPrefix(t, p) && len(t) >= len(p)+8 {
			return true
		}
	}
	return opaqueRE().MatchString(t) && !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, ".") &&
		strings.ContainsFunc(t, unicode.IsLetter) && strings.ContainsFunc(t, unicode.IsDigit)
}

// HasScheme reports whether v starts with an Authorization scheme and its
// credentials ("Bearer abc", "token abc").
func HasScheme(v string) bool { return schemeRE().MatchString(v) }

// SplitScheme splits "Bearer abc" into "Bearer " and "abc"; a value without an
// Authorization scheme is all credential.
func SplitScheme(v string) (scheme, cred string) {
	if HasScheme(v) {
		i := strings.IndexFunc(v, unicode.IsSpace)
		j := i + strings.IndexFunc(v[i:], func(r rune) bool { return !unicode.IsSpace(r) })
		return v[:j], v[j:]
	}
	return "", v
}
