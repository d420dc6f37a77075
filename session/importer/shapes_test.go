package importer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// shapeFixtures are one file per secret shape under testdata/import/shapes,
// each with every secret it holds and the non-secret values that must stay.
var shapeFixtures = []struct {
	file    string
	secrets []string
	kept    []string
}{
	{"flags.json", []string{"Flag1Pass", "Flag2Short", "Flag3Pw", "Flag4Tok", "Flag5Eq", "Flag6Pwd"}, []string{"--verbose"}},
	{"shell.json", []string{"Shell1Key", "Shell2 Pwd", "Shell2", "Shell3Pass", "Shell4Tok", "Shell5Sec"}, []string{"mysql-mcp --user app", "echo done"}},
	{"json-args.json", []string{"Json1Key", "Json2Sec", "482913", "Json3Pass"}, []string{`\"region\": \"eu\"`}},
	{"urls.json", []string{"Url1Frag", "Url2User", "Url3Pass", "Url4Frag", "Url5Tok"}, []string{"db.example.com/x"}},
	{"connection-strings.json", []string{"Conn1Pass", "Conn2Pwd", "Conn3Key", "Conn4Pass", "Conn5Pass"}, []string{"Server=db.local;User Id=app;Password=${"}},
	{"env-keys.json", []string{"Env1Pwd", "Env2Pass", "Env3Pw", "Env4Phrase", "Env5Login", "Env6Otp"}, []string{`LOG_LEVEL = "debug"`}},
	{"headers.json", []string{"Hdr1Sess", "Hdr2Cookie", "Hdr3Auth"}, []string{`Accept = "application/json"`, `User-Agent = "my-client/1.0"`}},
}

// TestImport_SecretShapes: each shape's secrets appear nowhere in the imported TOML
// (nor when the Result is printed); the TOML loads; and in memory (airlock --from)
// every value is back exactly as the source had it.
func TestImport_SecretShapes(t *testing.T) {
	for _, f := range shapeFixtures {
		t.Run(f.file, func(t *testing.T) {
			path := filepath.Join("..", "..", "testdata", "import", "shapes", f.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Convert(data, Options{Name: path, Home: "/home/user"})
			if err != nil {
				t.Fatal(err)
			}
			out := string(r.TOML)
			for _, s := range f.secrets {
				if strings.Contains(out, s) {
					t.Errorf("secret %q appears in the TOML:\n%s", s, out)
				}
				if strings.Contains(fmt.Sprintf("%v %+v %#v", r, r, r), s) {
					t.Errorf("secret %q appears when the Result is printed", s)
				}
			}
			for _, k := range f.kept {
				if !strings.Contains(out, k) {
					t.Errorf("non-secret %q was lost:\n%s", k, out)
				}
			}
			mem, err := r.Config(func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatalf("Result.Config: %v\n%s", err, out)
			}
			src, err := parseSource(data, f.file)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range mem.Servers {
				orig := src[s.Name]
				if !slices.Equal(s.Args, orig.args) && !(len(s.Args) == 0 && len(orig.args) == 0) {
					t.Errorf("%s: args in memory %q, source %q", s.Name, s.Args, orig.args)
				}
				for k, v := range orig.env {
					if s.Env[k] != v {
						t.Errorf("%s: env %s in memory %q, source %q", s.Name, k, s.Env[k], v)
					}
				}
				for k, v := range orig.headers {
					if s.Headers[k] != v {
						t.Errorf("%s: header %s in memory %q, source %q", s.Name, k, s.Headers[k], v)
					}
				}
				if orig.url != "" && s.URL != orig.url && !strings.Contains(orig.url, "@") {
					t.Errorf("%s: url in memory %q, source %q", s.Name, s.URL, orig.url)
				}
			}
		})
	}
}

type sourceServer struct {
	args         []string
	env, headers map[string]string
	url          string
}

// parseSource reads a shape fixture's servers as the source file has them.
func parseSource(data []byte, name string) (map[string]sourceServer, error) {
	var f struct {
		MCPServers map[string]struct {
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
			Headers map[string]string `json:"headers"`
			URL     string            `json:"url"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := map[string]sourceServer{}
	for n, s := range f.MCPServers {
		out[n] = sourceServer{args: s.Args, env: s.Env, headers: s.Headers, url: s.URL}
	}
	return out, nil
}
