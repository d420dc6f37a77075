package secrets_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/secrets"
	"github.com/airlock-mcp/airlock/trust"
)

const ghToken = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"

var apiKey = secrets.Known{Name: "the value of API_KEY that airlock passes to server mail", Value: "abcd1234efgh"}

func TestFind(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  string
		known []secrets.Known
		want  []string // sentences
	}{
		{"github token in a longer string", `{"body":"here is my key ` + ghToken + ` ok"}`, nil,
			[]string{"body holds something shaped like a GitHub token"}},
		{"fine-grained github token", `{"body":"github_pat_11ABCDEFG0123456789_abcdefghijklmnop"}`, nil,
			[]string{"body holds something shaped like a GitHub token"}},
		{"bearer in a nested header", `{"headers":{"Authorization":"Bearer abcdefgh12345678"}}`, nil,
			[]string{"headers.Authorization holds something shaped like a bearer token"}},
		{"array index", `{"items":["a","b","sk-proj-abcdefghijklmnopqrstuvwx"]}`, nil,
			[]string{"items[2] holds something shaped like an API secret key (sk-)"}},
		{"slack", `{"t":"xoxb-1234567890-abcdefghij"}`, nil, []string{"t holds something shaped like a Slack token"}},
		{"aws", `{"k":"AKIAIOSFODNN7EXAMPLE"}`, nil, []string{"k holds something shaped like an AWS access key"}},
		{"pem", `{"k":"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"}`, nil,
			[]string{"k holds something shaped like a private key"}},
		{"jwt", `{"k":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig"}`, nil,
			[]string{"k holds something shaped like a JSON Web Token"}},
		{"userinfo", `{"url":"https://bob:hunter22@example.com/"}`, nil,
			[]string{"url holds something shaped like a URL with a password"}},
		{"two shapes in one string, each once", `{"b":"` + ghToken + ` ` + ghToken + ` AKIAIOSFODNN7EXAMPLE"}`, nil,
			[]string{"b holds something shaped like a GitHub token", "b holds something shaped like an AWS access key"}},
		{"known value", `{"body":"key abcd1234efgh"}`, []secrets.Known{apiKey},
			[]string{"body holds the value of API_KEY that airlock passes to server mail"}},
		{"short known value is never looked for", `{"body":"prod"}`, []secrets.Known{{Name: "x", Value: "prod"}}, nil},
		{"top-level string", `"` + ghToken + `"`, nil, []string{"the arguments hold something shaped like a GitHub token"}},
		{"secret as a key name, hidden in deeper paths", `{"AKIAIOSFODNN7EXAMPLE":{"x":"` + ghToken + `"}}`, nil,
			[]string{"a key name of the arguments holds something shaped like an AWS access key", "[…].x holds something shaped like a GitHub token"}},
		{"odd key quoted", `{"a b":"` + ghToken + `"}`, nil, []string{`["a b"] holds something shaped like a GitHub token`}},
		{"plain", `{"body":"send the weekly report to bob","n":1,"ok":true,"x":null}`, nil, nil},
		{"an assignment is the audit's, not a shape", `{"body":"password: hunter2"}`, nil, nil},
		{"invalid", `{"body":`, nil, []string{"the arguments cannot be read to the end (invalid JSON), so airlock cannot tell whether they hold a secret"}},
		{"trailing garbage", `{} x`, nil, []string{"the arguments cannot be read to the end (invalid JSON), so airlock cannot tell whether they hold a secret"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range secrets.Find(json.RawMessage(tc.args), tc.known) {
				got = append(got, f.Sentence())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Find(%s) =\n %q\nwant\n %q", tc.args, got, tc.want)
			}
		})
	}
}

// Find walks as deep as Redact does, and no deeper: deeper arguments are unchecked.
func TestFind_DepthBounded(t *testing.T) {
	nest := func(n int) string {
		return strings.Repeat(`{"a":`, n) + `"` + ghToken + `"` + strings.Repeat(`}`, n)
	}
	if fs := secrets.Find(json.RawMessage(nest(trust.MaxArgsDepth)), nil); len(fs) != 1 || fs[0].Unchecked || fs[0].Shape != "a GitHub token" {
		t.Errorf("within the depth: %+v", fs)
	}
	if fs := secrets.Find(json.RawMessage(nest(trust.MaxArgsDepth+1)), nil); len(fs) != 1 || !fs[0].Unchecked {
		t.Errorf("past the depth: %+v", fs)
	}
}

func TestFind_Bounded(t *testing.T) {
	var items []string
	for range 3 * secrets.MaxFindings {
		items = append(items, ghToken)
	}
	raw, _ := json.Marshal(map[string]any{"items": items})
	if fs := secrets.Find(raw, nil); len(fs) != secrets.MaxFindings {
		t.Errorf("%d findings, want %d", len(fs), secrets.MaxFindings)
	}
}

func TestSentence(t *testing.T) {
	f := func(p string) secrets.Finding { return secrets.Finding{Path: p, Shape: "a GitHub token"} }
	if got := secrets.Sentence(nil); got != "" {
		t.Errorf("none: %q", got)
	}
	want := "a holds something shaped like a GitHub token; b holds something shaped like a GitHub token; c holds something shaped like a GitHub token (and 2 more)"
	if got := secrets.Sentence([]secrets.Finding{f("a"), f("b"), f("c"), f("d"), f("e")}); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestMask(t *testing.T) {
	for _, tc := range []struct{ name, args, want string }{
		{"github", `{"body":"here is my key ` + ghToken + ` ok"}`, `{"body":"here is my key ghp_…(40 chars) ok"}`},
		{"bearer keeps the scheme", `{"h":"Bearer abcdefgh12345678"}`, `{"h":"Bearer …(23 chars)"}`},
		{"jwt with its signature", `{"k":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2ln x"}`, `{"k":"eyJ…(53 chars) x"}`},
		{"pem keeps its header", `{"k":"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- after"}`,
			`{"k":"-----BEGIN RSA PRIVATE KEY-----…(66 chars) after"}`},
		{"userinfo keeps the host", `{"u":"https://bob:hunter22@example.com/"}`, `{"u":"https://…(15 chars)@example.com/"}`},
		{"known keeps nothing", `{"b":"x abcd1234efgh abcd1234efgh"}`, `{"b":"x …(12 chars) …(12 chars)"}`},
		{"key name", `{"AKIAIOSFODNN7EXAMPLE": 1, "b": [1, "<&>"]}`, `{"AKIA…(20 chars)": 1, "b": [1, "<&>"]}`},
		{"pem headers share one end, a later one has none", `{"k":"a -----BEGIN PRIVATE KEY----- -----BEGIN PRIVATE KEY----- -----END PRIVATE KEY----- b -----BEGIN PRIVATE KEY----- c"}`,
			`{"k":"a -----BEGIN PRIVATE KEY-----…(81 chars) b -----BEGIN PRIVATE KEY-----…(29 chars)"}`},
		{"nothing to mask is kept byte for byte", `{ "b" : "plain" }`, `{ "b" : "plain" }`},
		{"unreadable", `{"b":`, `"[arguments airlock cannot read: invalid JSON]"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(secrets.Mask(json.RawMessage(tc.args), []secrets.Known{apiKey})); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// The one table: every shape Find names is a shape the audit log redacts.
func TestFind_ShapesAreAuditShapes(t *testing.T) {
	for _, v := range []string{ghToken, "Bearer abcdefgh12345678", "AKIAIOSFODNN7EXAMPLE", "xoxb-1234567890-abcdefghij",
		"-----BEGIN PRIVATE KEY-----", "https://bob:hunter22@example.com/"} {
		raw, _ := json.Marshal(v)
		if len(secrets.Find(raw, nil)) != 1 || !secrets.Audit.Value(v) {
			t.Errorf("%q: Find %v, Audit.Value %v", v, secrets.Find(raw, nil), secrets.Audit.Value(v))
		}
	}
}

func FuzzFind(f *testing.F) {
	for _, s := range []string{`{"body":"` + ghToken + `"}`, `{"a":[1,{"b":"Bearer abcdefgh12345678"}]}`, `"abcd1234efgh"`,
		`{"AKIAIOSFODNN7EXAMPLE":null}`, `[`, `{"a":"\u00e9\ud800"}`, strings.Repeat("[", 70)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fs := secrets.Find(b, []secrets.Known{apiKey})
		if len(fs) > secrets.MaxFindings {
			t.Fatalf("%d findings", len(fs))
		}
		unchecked := slices.ContainsFunc(fs, func(f secrets.Finding) bool { return f.Unchecked })
		m := secrets.Mask(b, []secrets.Known{apiKey})
		if !json.Valid(m) {
			t.Fatalf("Mask(%q) = %q is not JSON", b, m)
		}
		if json.Valid(b) && !unchecked && len(fs) < secrets.MaxFindings && strings.Contains(string(m), apiKey.Value) {
			t.Fatalf("Mask(%q) = %q holds the known value", b, m)
		}
	})
}

func BenchmarkFind1MB(b *testing.B) {
	text := strings.Repeat("the quick brown fox jumps over the lazy dog; sk- ghp xox eyJ ", 1<<20/62)
	raw, _ := json.Marshal(map[string]string{"body": text + " " + ghToken})
	known := []secrets.Known{apiKey, {Name: "b", Value: "zyxw9876vuts"}}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if fs := secrets.Find(raw, known); len(fs) != 1 {
			b.Fatal(fs)
		}
	}
}

func BenchmarkFind1MBManyStrings(b *testing.B) {
	items := make([]string, 1<<20/24)
	for i := range items {
		items[i] = "an ordinary item text"
	}
	raw, _ := json.Marshal(map[string]any{"items": items})
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if fs := secrets.Find(raw, []secrets.Known{apiKey}); len(fs) != 0 {
			b.Fatal(fs)
		}
	}
}

// A string an attacker shapes so that every start of a shape fails late (a JWT's
// first part with no '.' after it, PEM headers with no END line) is still read in
// time linear in its size: Find and Mask stand before every question.
func TestFind_AdversarialLinear(t *testing.T) {
	for _, tc := range []struct{ name, unit string }{
		{"jwt starts in one run", "eyJ-"},
		{"pem headers without an end", "-----BEGIN PRIVATE KEY-----"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := json.Marshal(map[string]string{"b": strings.Repeat(tc.unit, 1<<20/len(tc.unit))})
			done := make(chan struct{})
			go func() {
				defer close(done)
				secrets.Find(raw, nil)
				secrets.Mask(raw, nil)
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("Find and Mask of 1 MiB took over 20s")
			}
		})
	}
}

// A Known that is all digits (a PIN, an account number, a numeric key) can be sent as
// a JSON number: it is found, masked and redacted there as in a string, searched for
// in the number as written.
func TestKnownSentAsANumber(t *testing.T) {
	pin := secrets.Known{Name: "the value of BANK_PIN that airlock passes to server bank", Value: "12345678"}
	args := json.RawMessage(`{"to":"x","amount":10,"account":{"pin":123456789,"n":[-12345678.5]}}`)
	fs := secrets.Find(args, []secrets.Known{pin})
	var paths []string
	for _, f := range fs {
		if !f.Known || f.Shape != pin.Name {
			t.Errorf("finding %+v, want the PIN", f)
		}
		paths = append(paths, f.Path)
	}
	if want := []string{"account.pin", "account.n[0]"}; !slices.Equal(paths, want) {
		t.Errorf("found at %q, want %q", paths, want)
	}
	masked := string(secrets.Mask(args, []secrets.Known{pin}))
	if strings.Contains(masked, "12345678") || !json.Valid([]byte(masked)) {
		t.Errorf("masked %s still holds the PIN or is not JSON", masked)
	}
	if want := `"pin":"…(9 chars)"`; !strings.Contains(masked, want) {
		t.Errorf("masked %s lacks %s", masked, want)
	}
	red := string(secrets.RedactWith(args, []secrets.Known{pin}))
	if strings.Contains(red, "12345678") {
		t.Errorf("redacted %s still holds the PIN", red)
	}
	for _, want := range []string{`"pin":"[redacted sha256:` + sha("123456789") + `]"`, `"amount":10`} {
		if !strings.Contains(red, want) {
			t.Errorf("redacted %s lacks %s", red, want)
		}
	}
	// Other numbers are left as they are, and read as numbers.
	if fs := secrets.Find(json.RawMessage(`{"a":1234567,"b":87654321}`), []secrets.Known{pin}); len(fs) != 0 {
		t.Errorf("findings %+v in numbers that do not hold the PIN", fs)
	}
}

// A number is read by the server as its value: the PIN spelled with an exponent, or
// as a float64 that parses to it, is the PIN to every check.
func TestKnownSentAsANumber_AnySpelling(t *testing.T) {
	pin := secrets.Known{Name: "the value of BANK_PIN that airlock passes to server bank", Value: "12345678"}
	known := []secrets.Known{pin}
	for _, lit := range []string{"1.2345678e7", "1.2345678E+7", "-1.2345678e7", "12345677.99999999999", "1.2345678e6", "0.12345678e-5",
		// Past 1e30 and below 1e-30, a subnormal, and one written with a second
		// spelling of the PIN beside the first.
		"1.23456779999999999999e31", "1.23456779999999999999e-31", "1.23456779e-316", "123456781.2345678"} {
		args := json.RawMessage(`{"n":[` + lit + `]}`)
		fs := secrets.Find(args, known)
		if len(fs) != 1 || fs[0].Path != "n[0]" || !fs[0].Known {
			t.Errorf("%s: findings %+v, want the PIN at n[0]", lit, fs)
		}
		masked := string(secrets.Mask(args, known))
		if strings.Contains(masked, lit) || strings.Contains(masked, "12345678") || !json.Valid([]byte(masked)) || !strings.Contains(masked, " chars)") {
			t.Errorf("%s: masked %s, want the PIN masked", lit, masked)
		}
		if red := string(secrets.RedactWith(args, known)); red != `{"n":["[redacted sha256:`+sha(lit)+`]"]}` {
			t.Errorf("%s: redacted %s", lit, red)
		}
	}
	// A number holding the PIN is masked whole, however it holds it.
	for lit, want := range map[string]string{"1.2345678e7": `{"n":"…(11 chars)"}`, "123456781.2345678": `{"n":"…(17 chars)"}`} {
		if masked := string(secrets.Mask(json.RawMessage(`{"n":`+lit+`}`), known)); masked != want {
			t.Errorf("%s masked %s, want %s", lit, masked, want)
		}
	}
	// Rounding up adds a digit: 99…9 of twenty digits is the float64 1e20.
	twenty := []secrets.Known{{Name: "the value of N", Value: "100000000000000000000"}}
	if fs := secrets.Find(json.RawMessage(`{"n":99999999999999999999}`), twenty); len(fs) != 1 {
		t.Errorf("findings %+v in 99999999999999999999, which reads as 1e20", fs)
	}
	// Numbers whose value does not hold the PIN, in any spelling, are numbers.
	for _, lit := range []string{"1.2345679e7", "12345679", "1234567e1", "1.234567", "12345677.5", "1e308", "1e-400", "-0"} {
		args := json.RawMessage(`{"n":` + lit + `}`)
		if fs := secrets.Find(args, known); len(fs) != 0 {
			t.Errorf("%s: findings %+v", lit, fs)
		}
		if red := string(secrets.RedactWith(args, known)); red != string(args) {
			t.Errorf("%s: redacted %s", lit, red)
		}
	}
	// A Known that is itself a number is found in a number of the same value, exactly
	// or as a float64, with its sign; one that is not a number only as written.
	for value, cases := range map[string]map[string]bool{
		"-1234567":  {"-1.234567e6": true, "-12345670e-1": true, "-1234567.0": true, "1234567": false, "-1234568": false},
		"1234567.5": {"1.2345675e6": true, "12345675e-1": true, "1234567.49999999999999999": true, "1234567.4": false, "1.2345674e6": false},
		"1234e567":  {"1234e567": true, "1.234e570": true, "1.235e570": false},
		"e5671234":  {"1e56712345": true, "1e5671233": false},
	} {
		known := []secrets.Known{{Name: "the value of X", Value: value}}
		for lit, want := range cases {
			args := json.RawMessage(`{"n":` + lit + `}`)
			if got := len(secrets.Find(args, known)) == 1; got != want {
				t.Errorf("Known %s in %s: found %v, want %v", value, lit, got, want)
			}
			if redacted := string(secrets.RedactWith(args, known)) != string(args); redacted != want {
				t.Errorf("Known %s in %s: redacted %v, want %v", value, lit, redacted, want)
			}
		}
	}
	// An exponent too large to write out is bounded, and a long literal is read once.
	long := "1" + strings.Repeat("0", 100000) + "e999999999999999999999"
	if fs := secrets.Find(json.RawMessage(`{"a":`+long+`}`), []secrets.Known{{Name: "zeros", Value: "10000000"}}); len(fs) != 1 {
		t.Errorf("findings %+v in a long number holding 10000000", fs)
	}
}

// A literal whose leading zeros make up for an exponent of six digits is the value
// Python's json and JavaScript's JSON.parse read (12345678; 1234567.5), though Go's
// strconv.ParseFloat stops reading an exponent at 10000 and reads 0: the number's
// float64 is taken from its value, not from the literal as written. About 100 KB,
// under the default max_args_bytes.
func TestKnownSentAsANumber_LongExponent(t *testing.T) {
	z := 100_000
	zeros := strings.Repeat("0", z)
	for _, tc := range []struct{ known, lit string }{
		// 12345677.99999999999999: the float64 12345678.
		{"12345678", "0." + zeros + "1234567799999999999999e" + strconv.Itoa(z+8)},
		{"12345678", "1234567799999999999999" + zeros + "e-" + strconv.Itoa(z+14)},
		// A Known that is a number: 1234567.49999999999999999 is 1234567.5.
		{"1234567.5", "0." + zeros + "123456749999999999999999e" + strconv.Itoa(z+7)},
	} {
		known := []secrets.Known{{Name: "the value of BANK_PIN", Value: tc.known}}
		args := json.RawMessage(`{"n":` + tc.lit + `}`)
		if fs := secrets.Find(args, known); len(fs) != 1 {
			t.Errorf("Known %s in a %d-byte literal %s…%s: findings %+v, want the Known", tc.known, len(tc.lit), tc.lit[:4], tc.lit[len(tc.lit)-30:], fs)
		}
		if masked := secrets.Mask(args, known); strings.Contains(string(masked), tc.lit) {
			t.Errorf("Known %s: Mask left the literal on screen", tc.known)
		}
		if red := secrets.RedactWith(args, known); strings.Contains(string(red), tc.lit) {
			t.Errorf("Known %s: RedactWith left the literal in the audit record", tc.known)
		}
	}
}

// An exponent of eight digits, made up for by ten million zeros, is read whole: the
// exact value of the literal is 1e7 (a 10 MB argument: max_args_bytes goes up to 32
// MiB).
func TestKnownSentAsANumber_EightDigitExponent(t *testing.T) {
	z := 10_000_000
	lit := "0." + strings.Repeat("0", z) + "1e" + strconv.Itoa(z+8) // exactly 1e7
	known := []secrets.Known{{Name: "the value of N", Value: "10000000"}}
	if fs := secrets.Find(json.RawMessage(`{"n":`+lit+`}`), known); len(fs) != 1 {
		t.Errorf("10000000 spelled 0.(1e7 zeros)1e10000008: findings %+v, want the Known", fs)
	}
}

// A digits-only Known with leading zeros (an account number 00123456) has the value
// 123456, and JSON spells that value only without them (00123456 is not JSON): a
// number of that value holds it, in any spelling.
func TestKnownSentAsANumber_LeadingZerosAreItsValue(t *testing.T) {
	known := []secrets.Known{{Name: "the value of ACCOUNT that airlock passes to server bank", Value: "00123456"}}
	for _, lit := range []string{"123456", "1.23456e5", "123456.0", "12345.6e1"} {
		args := json.RawMessage(`{"n":` + lit + `}`)
		if fs := secrets.Find(args, known); len(fs) != 1 {
			t.Errorf("00123456 sent as %s: findings %+v, want the Known", lit, fs)
		}
		if red := string(secrets.RedactWith(args, known)); red == string(args) {
			t.Errorf("00123456 sent as %s: redacted %s", lit, red)
		}
	}
}

// A digits-only Known is found in a number whose digits hold it, sign and point
// aside (-12345678 and 12345678.5 hold 12345678); a zero-padded one whose digits
// are as many without its zeros (0012345678) is found wherever they are.
func TestKnownSentAsANumber_ZeroPaddedSignAndFraction(t *testing.T) {
	for _, lit := range []string{"-12345678", "12345678.5", "-1.2345678e7", "112345678", "12345678"} {
		args := json.RawMessage(`{"n":` + lit + `}`)
		plain := secrets.Find(args, []secrets.Known{{Name: "the value of ACCOUNT", Value: "12345678"}})
		padded := secrets.Find(args, []secrets.Known{{Name: "the value of ACCOUNT", Value: "0012345678"}})
		t.Logf("%s: plain %d padded %d", lit, len(plain), len(padded))
		if len(plain) == 1 && len(padded) == 0 {
			t.Errorf("%s: found for Known 12345678 but not for Known 0012345678 (the same digits reach the server)", lit)
		}
	}
}

// Spellings of the values 123456 and 12345678 past float64's and strconv's reach:
// long runs of zeros and nines, exponents of many digits, signs.
func TestKnownSentAsANumber_FarSpellings(t *testing.T) {
	cases := []struct{ known, lit string }{
		{"00123456", "123455.99999999999999999"},
		{"00123456", "0." + strings.Repeat("0", 20000) + "123456e20006"},
		{"00123456", "123456" + strings.Repeat("0", 20000) + "e-20000"},
		{"12345678", "0." + strings.Repeat("0", 900) + strings.Repeat("1", 0) + "1234567799999999999999" + strings.Repeat("9", 900) + "e908"},
		{"12345678", "-0." + strings.Repeat("0", 20000) + "12345678e20008"},
		{"12345678", "12345677" + strings.Repeat("9", 1000) + "e-1000"},
		{"12345678", "12345677" + strings.Repeat("9", 100000) + "e-100000"},
		{"12345678", "-12345677" + strings.Repeat("9", 100000) + "e-100000"},
		{"1234567.5", "1234567" + strings.Repeat("4", 1) + strings.Repeat("9", 100000) + "e-100001"},
		{"12345678", "12345678e1073741824"},
		{"12345678", "1.2345678e0000000000000000000007"},
	}
	for _, c := range cases {
		fs := secrets.Find(json.RawMessage(`{"n":`+c.lit+`}`), []secrets.Known{{Name: "K", Value: c.known}})
		if len(fs) != 1 {
			l := c.lit
			if len(l) > 60 {
				l = l[:30] + "…" + l[len(l)-30:]
			}
			t.Errorf("Known %s in %s: %d findings", c.known, l, len(fs))
		}
	}
}
