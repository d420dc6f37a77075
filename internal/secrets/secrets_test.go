package secrets

import (
	"slices"
	"testing"
)

// The one splitter: both policies split at separators and case changes alike; only
// Audit splits where a capital follows a digit.
func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		key          string
		audit, imprt []string
	}{
		{"accessToken", []string{"access", "token"}, []string{"access", "token"}},
		{"X-Api-Key", []string{"x", "api", "key"}, []string{"x", "api", "key"}},
		{"MYSQL_PWD", []string{"mysql", "pwd"}, []string{"mysql", "pwd"}},
		{"OAuthToken", []string{"o", "auth", "token"}, []string{"o", "auth", "token"}},
		{"APIKEY", []string{"apikey"}, []string{"apikey"}},
		{"s3Key", []string{"s3", "key"}, []string{"s3key"}},
		{"", nil, nil},
	} {
		if got := split(tc.key, auditKeys.digitBreaks); !slices.Equal(got, tc.audit) {
			t.Errorf("audit split(%q) = %q, want %q", tc.key, got, tc.audit)
		}
		if got := split(tc.key, importKeys.digitBreaks); !slices.Equal(got, tc.imprt) {
			t.Errorf("import split(%q) = %q, want %q", tc.key, got, tc.imprt)
		}
	}
}

// Where the two policies part, each as its doc says.
func TestPoliciesDiffer(t *testing.T) {
	for _, tc := range []struct {
		key          string
		audit, imprt bool
	}{
		{"token", true, true},
		{"api_key", true, true},
		{"key", false, true},       // a lookup key to the audit, a secret to the importer
		{"session", false, true},   // session alone
		{"sessionId", true, true},  // an audit pair; session alone to the importer
		{"authtoken", false, true}, // inside a word
		{"privateKey", true, true}, // audit pair, import "key"
		{"passwords", true, true},  // audit word, import inside word
		{"keywords", false, false}, // neither
		{"tokenizer", false, true}, // inside a word to the importer
		{"pin", false, true},       // short names the importer adds
		{"login", false, true},
		{"set-cookies", true, false}, // audit plural only
	} {
		if got := Audit.Key(tc.key); got != tc.audit {
			t.Errorf("Audit.Key(%q) = %v, want %v", tc.key, got, tc.audit)
		}
		if got := Import.Key(tc.key); got != tc.imprt {
			t.Errorf("Import.Key(%q) = %v, want %v", tc.key, got, tc.imprt)
		}
	}
}

func TestSplitScheme(t *testing.T) {
	for _, tc := range []struct{ in, scheme, cred string }{
		{"Bearer abc", "Bearer ", "abc"},
		{"token  x y", "token  ", "x y"},
		{"abc", "", "abc"},
		{"Bearer", "", "Bearer"},
	} {
		if s, c := SplitScheme(tc.in); s != tc.scheme || c != tc.cred {
			t.Errorf("SplitScheme(%q) = %q, %q, want %q, %q", tc.in, s, c, tc.scheme, tc.cred)
		}
	}
}
