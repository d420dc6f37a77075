package conn

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestSameOriginRedirect(t *testing.T) {
	req := func(raw string) *http.Request {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return &http.Request{URL: u}
	}
	tests := []struct {
		from, to string
		ok       bool
	}{
		{"https://api.example.com/mcp", "https://api.example.com/v2/mcp", true},
		{"https://api.example.com/mcp", "https://API.example.com:443/mcp", true},
		{"http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/other", true},
		{"http://127.0.0.1:8000/mcp", "http://127.0.0.1:8001/mcp", false},
		{"https://api.example.com/mcp", "http://api.example.com/mcp", false},
		{"https://api.example.com/mcp", "https://evil.example.com/mcp", false},
		{"http://localhost/mcp", "https://localhost/mcp", false},
	}
	for _, tt := range tests {
		err := sameOriginRedirect(req(tt.to), []*http.Request{req(tt.from)})
		if (err == nil) != tt.ok {
			t.Errorf("%s -> %s: err = %v, want ok=%v", tt.from, tt.to, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrCrossOriginRedirect) {
			t.Errorf("%s -> %s: %v is not ErrCrossOriginRedirect", tt.from, tt.to, err)
		}
	}
	if err := sameOriginRedirect(req("https://a/x?token=s3cret"), []*http.Request{req("http://a/")}); err == nil {
		t.Error("http -> https on another origin (port 80 -> 443) was followed")
	} else if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error prints a query: %v", err)
	}
}

func TestRedactURL(t *testing.T) {
	tests := map[string]string{
		"https://user:pw@h.example/p?token=abc#frag": "https://***@h.example/p?…#…",
		"http://127.0.0.1:9/mcp":                     "http://127.0.0.1:9/mcp",
		"http://h/p?":                                "http://h/p?…",
		"http://[::1]:80/x?k=v":                      "http://[::1]:80/x?…",
	}
	for in, want := range tests {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	inner := errors.New("boom")
	err := RedactURLs(fmt.Errorf(`Post "https://u:p@h/mcp?key=s3cret": %w; see https://h/x?a=b.`, inner))
	if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "a=b") || strings.Contains(err.Error(), "u:p") {
		t.Errorf("redactURLs left a secret: %v", err)
	}
	if !strings.HasSuffix(err.Error(), "https://h/x?….") || !errors.Is(err, inner) {
		t.Errorf("redactURLs = %v (Is inner: %v)", err, errors.Is(err, inner))
	}
}
