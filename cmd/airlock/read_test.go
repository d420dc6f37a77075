package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// everythingEvConfig is a config with the pinned npm server-everything under the name
// ev, with extra lines in its table; the test is skipped without the npm servers.
func everythingEvConfig(t *testing.T, extra string) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("..", "..", "testdata", "npm", "node_modules", ".bin", "mcp-server-everything"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skip("npm reference servers are not installed")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	return writeConfig(t, "[servers.ev]\ncommand = "+strconvQuote(bin)+"\nconnect_timeout = \"60s\"\n"+extra)
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// check --json lists resources, templates and prompts per server; the table counts
// them; read and prompt go through the engine (allowed by policy, refused by a
// deny policy with exit 5, asked and denied without a terminal with exit 5).
func TestReadAndPrompt_ThroughTheEngine(t *testing.T) {
	cfg := everythingEvConfig(t, "trust = \"trusted\"\n")
	r := airlock(t, "", "check", "--json", "--config", cfg)
	var rep struct {
		Servers []struct {
			Name      string `json:"name"`
			Resources []struct {
				URI      string `json:"uri"`
				Name     string `json:"name"`
				MIMEType string `json:"mimeType"`
			} `json:"resources"`
			Templates []struct {
				URITemplate string `json:"uriTemplate"`
			} `json:"resource_templates"`
			Prompts []struct {
				Name      string `json:"name"`
				Arguments []struct {
					Name string `json:"name"`
				} `json:"arguments"`
			} `json:"prompts"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("check --json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	if len(rep.Servers) != 1 || len(rep.Servers[0].Resources) == 0 || len(rep.Servers[0].Templates) == 0 || len(rep.Servers[0].Prompts) == 0 {
		t.Fatalf("check --json servers = %+v", rep.Servers)
	}
	sv := rep.Servers[0]
	r = airlock(t, "", "check", "--config", cfg)
	if !strings.Contains(r.stdout, "RESOURCES") || !strings.Contains(r.stdout, "PROMPTS") {
		t.Errorf("check's table does not count resources and prompts:\n%s", r.stdout)
	}

	uri := "demo://resource/dynamic/text/1"
	r = airlock(t, "", "read", "ev", uri, "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, uri) || !strings.Contains(r.stderr, "(allowed by policy, in ") {
		t.Errorf("read: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "prompt", "ev", "completable-prompt", "--args", `{"department":"Sales","name":"Eve"}`, "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "Eve") || !strings.Contains(r.stdout, "role user") {
		t.Errorf("prompt: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "prompt", "ev", "completable-prompt", "--args", `{"department":1}`, "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "object of strings") {
		t.Errorf("prompt with a number argument: exit %d\n%s", r.code, r.stderr)
	}

	deny := everythingEvConfig(t, "trust = \"trusted\"\nresources = \"deny\"\nprompts = \"ask\"\n")
	r = airlock(t, "", "read", "ev", uri, "--config", deny)
	if r.code != 5 || !strings.Contains(r.stderr, "denied by policy") || strings.Contains(r.stdout, uri) {
		t.Errorf("read with resources = deny: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "prompt", "ev", sv.Prompts[0].Name, "--config", deny)
	if r.code != 5 || !strings.Contains(r.stderr, "this prompt get needs your approval") || !strings.Contains(r.stderr, "Not a terminal") {
		t.Errorf("prompt with prompts = ask, no terminal: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = airlock(t, "", "read", "ev", "--config", cfg)
	if r.code != 2 || !strings.Contains(r.stderr, "usage: airlock read SERVER URI") {
		t.Errorf("read without a URI: exit %d\n%s", r.code, r.stderr)
	}
}
