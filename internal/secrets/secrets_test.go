package secrets

import (
	"math/rand/v2"
	"slices"
	"strings"
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

// The key-name check without allocations gives split's answer for every ASCII name
// it takes, under both policies, and leaves every other name to split: names made of
// the policies' words in every case, with digits and separators, past its bounds
// (a word over 32 bytes, more than 16 words) and not ASCII.
func TestASCIISecret_IsSplitsAnswer(t *testing.T) {
	pieces := []string{"token", "Token", "TOKEN", "api", "Api", "API", "key", "Key", "KEY", "s3", "3", "x", "X",
		"O", "Auth", "auth", "session", "Id", "ID", "private", "Access", "pass", "PWD", "monkey", "words", "accountkey",
		"_", "-", ".", " ", ":", "\t", "9", "é", "Ω", "\x7f", "\x00", strings.Repeat("a", 33), "aB", "Ab", "AB"}
	r := rand.New(rand.NewPCG(5, 6))
	took := 0
	const names = 200_000
	for range names {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		if r.IntN(20) == 0 {
			b.WriteString(strings.Repeat("a_", 17)) // more than 16 words
		}
		name := b.String()
		for _, k := range []keyWords{auditKeys, importKeys} {
			got, ok := k.asciiSecret(name)
			want := k.secretIn(split(name, k.digitBreaks))
			if ok {
				took++
				if got != want {
					t.Fatalf("digitBreaks %v: asciiSecret(%q) = %v, split's answer %v (%q)", k.digitBreaks, name, got, want, split(name, k.digitBreaks))
				}
			}
			if k.secret(name) != want {
				t.Fatalf("secret(%q) = %v, want %v", name, !want, want)
			}
		}
	}
	// Both ways are taken: a test of one only would prove nothing.
	if took < names/2 || took > 2*names*9/10 {
		t.Fatalf("asciiSecret took %d of %d names", took, 2*names)
	}
}

// BenchmarkKeySecret is the audit policy's check of one ordinary key name, beside
// the same check through split.
func BenchmarkKeySecret(b *testing.B) {
	for _, name := range []string{"X-Request-Id", "include_archived_notes"} {
		b.Run(name+"/secret", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if auditKeys.secret(name) {
					b.Fatal("secret")
				}
			}
		})
		b.Run(name+"/split", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if auditKeys.secretIn(split(name, auditKeys.digitBreaks)) {
					b.Fatal("secret")
				}
			}
		})
	}
}
