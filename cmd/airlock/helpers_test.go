package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/sessiontest"
)

// exampleConfig is the repository's example config, seen from this package.
const exampleConfig = "../../config.example.toml"

// demoServerTOML is the config table of the demo server name, started as this
// binary's `demo-server name` with trust tr, and then each of extra as a line.
func demoServerTOML(name, tr string, extra ...string) string {
	s := "[servers." + name + "]\ncommand = \"airlock\"\nargs = [\"demo-server\", \"" + name + "\"]\ntrust = \"" + tr + "\"\n"
	for _, l := range extra {
		s += l + "\n"
	}
	return s
}

// writeFile writes body to a private file at path, making its folder (private
// too) when there is none.
func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	sessiontest.WriteScript(t, path, body)
}

// stateConfig writes a config whose state_dir is state, followed by body.
func stateConfig(t *testing.T, state string, body ...string) string {
	t.Helper()
	return writeConfig(t, "state_dir = \""+state+"\"\n"+strings.Join(body, ""))
}

// getDoc runs `airlock call docs get_doc` for the document mcp-overview on the
// config at cfg.
func getDoc(t *testing.T, cfg string) result {
	t.Helper()
	return airlock(t, "", "call", "docs", "get_doc", "--config", cfg, "--args", `{"id":"mcp-overview"}`)
}

// mustGetDoc is getDoc, which must succeed.
func mustGetDoc(t *testing.T, cfg string) {
	t.Helper()
	if r := getDoc(t, cfg); r.code != 0 {
		t.Fatalf("call: exit %d %s", r.code, r.stderr)
	}
}

// auditVerify runs `airlock audit verify` on the audit log of the config at cfg.
func auditVerify(t *testing.T, cfg string) result {
	t.Helper()
	return airlock(t, "", "audit", "verify", "--config", cfg)
}

// fetchBlog runs `airlock call web fetch_url` on the demo's injection page, which
// taints the context it is read in.
func fetchBlog(t *testing.T, cfg string) result {
	t.Helper()
	return airlock(t, "", "call", "web", "fetch_url", "--config", cfg, "--args", `{"url":"https://blog.example.com/mcp-tips"}`)
}

// strictCheckJSON decodes the output of `airlock check --json`, refusing any
// field checkJSON does not name.
func strictCheckJSON(out string) (checkJSON, error) {
	var got checkJSON
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	err := dec.Decode(&got)
	return got, err
}

// snapshotExample runs `airlock snapshot` of the example config into the file snap.
func snapshotExample(t *testing.T, snap string) result {
	t.Helper()
	return airlock(t, "", "snapshot", "--config", exampleConfig, "-o", snap)
}
