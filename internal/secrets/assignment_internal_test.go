package secrets

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// assignmentRE is the expression assignmentKeys scans for, kept here as the
// reference the scan is compared with.
var assignmentRE = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.-]*)["']?\s*[=:]\s*["']?[^\s"',;&]`)

func keysByRE(s string) []string {
	var keys []string
	for _, m := range assignmentRE.FindAllStringSubmatch(s, -1) {
		keys = append(keys, m[1])
	}
	return keys
}

func keysByScan(s string) []string {
	var keys []string
	assignmentKeys(s, func(k string) bool { keys = append(keys, k); return true })
	return keys
}

// The scan yields exactly the keys the expression finds, in order, for strings
// made of the characters that matter to it (every class boundary: letters, digits,
// the identifier's punctuation, quotes, each space the expression knows and the
// vertical tab it does not, both separators, the excluded value characters, a
// multi-byte rune and bytes that are not UTF-8).
func TestAssignmentKeys_AsTheExpressionFindsThem(t *testing.T) {
	for _, s := range []string{
		"", "token=abc", "https://host/?token=x&password=y", `{"api_key": "v"}`, "a=bc=d",
		"x=ypassword=z", `key"=v`, "key ' = 'v", "key=\"", "key=''x", "key= ,", "key=\vx",
		"key\v=x", "1key=x", "9.-_a=b", "a.b-c_d:e", "k=é", "k=\xff", "k:\"é", "é=x", "k=" + "\n" + "v",
		"PASSWORD :\t\"hunter2\"", "a = = b", "::a=b", "_=_", "a=", "=a", "a'", "a'=",
	} {
		if re, sc := keysByRE(s), keysByScan(s); !slices.Equal(re, sc) {
			t.Errorf("%q: expression %q, scan %q", s, re, sc)
		}
	}
	alphabet := []string{"a", "Z", "_", "k", "9", ".", "-", `"`, "'", " ", "\t", "\n", "\r", "\f", "\v",
		"=", ":", ",", ";", "&", "é", "\xff", "\xe2\x82", "x", "/", "?"}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 200000 {
		var b strings.Builder
		for range r.IntN(24) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := b.String()
		if re, sc := keysByRE(s), keysByScan(s); !slices.Equal(re, sc) {
			t.Fatalf("string %d %q: expression %q, scan %q", n, s, re, sc)
		}
	}
}

func FuzzAssignmentKeys(f *testing.F) {
	for _, s := range []string{"token=abc", `{"api_key": "v"}`, "x=ypassword=z", "k=\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if re, sc := keysByRE(s), keysByScan(s); !slices.Equal(re, sc) {
			t.Fatalf("%q: expression %q, scan %q", s, re, sc)
		}
	})
}

// BenchmarkShaped100KB is the check of one 100 KB string argument for an assignment
// of a secret-named key, with separators through it and none a secret.
func BenchmarkShaped100KB(b *testing.B) {
	s := strings.Repeat("the quick brown fox: jumps over=the lazy dog ", 100<<10/45)
	for b.Loop() {
		if shaped(s) {
			b.Fatal("shaped")
		}
	}
}
