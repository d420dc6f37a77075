package cli

import (
	"bytes"
	"strings"
	"testing"
)

// Every format that lists a hazard's legs marks what runs unasked, and lists it
// first: in the demo's trifecta, web__fetch_url (read tier, allowed) before
// mail__send_email (which asks).
func TestFormats_MarkWhatRunsUnasked(t *testing.T) {
	r := offlineReport(t, Input{})
	const want = "untrusted-content: web__fetch_url (runs unasked), mail__send_email"
	for _, format := range []string{"text", "sarif", "github", "junit"} {
		var b bytes.Buffer
		if err := r.Write(&b, format, "test"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("%s: lacks %q:\n%s", format, want, b.String())
		}
	}
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "web\\_\\_fetch\\_url (runs unasked), mail\\_\\_send\\_email") && !strings.Contains(b.String(), "web__fetch_url (runs unasked), mail__send_email") {
		t.Errorf("markdown lacks the mark:\n%s", b.String())
	}
}
