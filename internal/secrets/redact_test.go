package secrets_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/secrets"
	"github.com/airlock-mcp/airlock/trust"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Hostile case 56: a hostile agent hides secrets under innocent key
// names. Keys are matched as whole words (keywords and monkey are not secret keys),
// values are read for secret shapes, and a redacted value is replaced by its own
// SHA-256 so the log proves what was sent.
func TestHostile56_SecretShapedValuesUnderInnocentKeys(t *testing.T) {
	awsLine := "AWS_SECRET=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	pem := "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----"
	raw, _ := json.Marshal(map[string]string{"keywords": awsLine, "monkey": pem})
	got := string(secrets.Redact(raw))
	for _, secret := range []string{"wJalrXUtnFEMI", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"} {
		if strings.Contains(got, secret) {
			t.Errorf("redacted args %s still hold %q", got, secret)
		}
	}
	for _, want := range []string{`"keywords":"[redacted sha256:` + sha(awsLine) + `]"`, `"monkey":"[redacted sha256:` + sha(pem) + `]"`} {
		if !strings.Contains(got, want) {
			t.Errorf("redacted args %s lack %s", got, want)
		}
	}
}

func TestAuditRedact_KeyNamesAreWholeWords(t *testing.T) {
	for _, tc := range []struct {
		key    string
		secret bool
	}{
		{"keywords", false}, {"monkey", false}, {"author", false}, {"passage", false},
		{"tokenizer", false}, {"otpional", false}, {"key", false}, {"secretary", false},
		{"token", true}, {"Token", true}, {"access_token", true}, {"accessToken", true},
		{"X-Api-Key", true}, {"api_key", true}, {"apiKey", true}, {"APIKEY", true},
		{"secret", true}, {"client_secret", true}, {"password", true}, {"PASSWD", true},
		{"passphrase", true}, {"pwd", true}, {"MYSQL_PWD", true}, {"auth", true},
		{"Authorization", true}, {"cookie", true}, {"Set-Cookie", true}, {"private_key", true},
		{"privateKey", true}, {"otp", true}, {"credential", true}, {"credentials", true},
		{"OAuthToken", true}, {"aws_secret_access_key", true},
	} {
		raw, _ := json.Marshal(map[string]string{tc.key: "plain words"})
		got := string(secrets.Redact(raw))
		redacted := strings.Contains(got, "[redacted sha256:"+sha("plain words")+"]")
		if redacted != tc.secret {
			t.Errorf("key %q: redacted = %v, want %v (%s)", tc.key, redacted, tc.secret, got)
		}
	}
}

func TestAuditRedact_SecretShapedValues(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		secret      bool
	}{
		{"bearer", "Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", true},
		{"github classic", "use ghp_16C7e42F292c6912E7710c838347Ae178B4a now", true},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", true},
		{"openai", "sk-proj-abcdefghijklmnopqrstuvwx", true},
		{"slack", "xoxb-1234567890-abcdefghij", true},
		{"aws access key id", "AKIAIOSFODNN7EXAMPLE", true},
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIE", true},
		{"assignment", "export API_KEY=abc123", true},
		{"colon assignment", "password: hunter2", true},
		{"userinfo", "https://bob:hunter2@example.com/x", true},
		{"json in a string", `{"api_key": "abc123"}`, true},
		{"query parameter", "https://api.example.com/v1?token=abc123", true},
		{"basic auth header", "Authorization: Basic dXNlcjpwYXNz", true},
		{"plain", "send the weekly report to bob", false},
		{"word sk-", "task-force meeting", false},
		{"keyword assignment", "keywords=red,green", false},
	} {
		raw, _ := json.Marshal(map[string]any{"body": tc.value, "list": []string{tc.value}})
		got := string(secrets.Redact(raw))
		redacted := strings.Count(got, "[redacted sha256:"+sha(tc.value)+"]") == 2
		if redacted != tc.secret {
			t.Errorf("%s: redacted = %v, want %v (%s)", tc.name, redacted, tc.secret, got)
		}
	}
}

// A secret key's value is hashed whatever its JSON type, from the bytes that were sent.
func TestAuditRedact_NonStringSecretHashedAsSent(t *testing.T) {
	got := string(secrets.Redact(json.RawMessage(`{"token":{"a": 1},"n":1.50}`)))
	if !strings.Contains(got, `"token":"[redacted sha256:`+sha(`{"a": 1}`)+`]"`) || !strings.Contains(got, `"n":1.50`) {
		t.Errorf("got %s", got)
	}
}

// A secret sent as a key name is redacted too.
func TestAuditRedact_SecretAsKeyName(t *testing.T) {
	got := string(secrets.Redact(json.RawMessage(`{"AKIAIOSFODNN7EXAMPLE":"x"}`)))
	if strings.Contains(got, "AKIAIOSFODNN7EXAMPLE") || !strings.Contains(got, sha("AKIAIOSFODNN7EXAMPLE")) {
		t.Errorf("got %s", got)
	}
}

// Redact parses each level again, so it refuses to go deeper than Manager.Call lets
// arguments be: a deeper value is logged as unparseable, never walked level by level.
func TestAuditRedact_DepthBounded(t *testing.T) {
	deep := strings.Repeat(`{"a":`, trust.MaxArgsDepth+2) + `"x"` + strings.Repeat(`}`, trust.MaxArgsDepth+2)
	if got := string(secrets.Redact(json.RawMessage(deep))); got != `"[unparseable arguments redacted]"` {
		t.Errorf("arguments deeper than %d were walked: %.80s", trust.MaxArgsDepth, got)
	}
	ok := strings.Repeat(`{"a":`, trust.MaxArgsDepth-1) + `"x"` + strings.Repeat(`}`, trust.MaxArgsDepth-1)
	if got := string(secrets.Redact(json.RawMessage(ok))); got != ok {
		t.Errorf("arguments within the depth changed: %.80s", got)
	}
}

// RedactWith also redacts the values of the Knowns, inside a longer string or as a
// key name, and never one shorter than MinKnown.
func TestRedactWith_KnownValues(t *testing.T) {
	known := []secrets.Known{{Name: "API_KEY", Value: "abcd1234efgh"}, {Name: "SHORT", Value: "tiny"}}
	got := string(secrets.RedactWith(json.RawMessage(`{"body":"key abcd1234efgh","abcd1234efgh":1,"n":"tiny"}`), known))
	if strings.Contains(got, "abcd1234efgh") || !strings.Contains(got, sha("key abcd1234efgh")) || !strings.Contains(got, `"n":"tiny"`) {
		t.Errorf("got %s", got)
	}
}
