package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// roots: paths, ~ and file:// URIs become absolute clean paths that exist; every
// invalid entry is an error naming the key, its index and line.
func TestParseRoots(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{"project", "scratch", "with space"} {
		if err := os.Mkdir(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": home}
	proj, scratch, spaced := filepath.Join(home, "project"), filepath.Join(home, "scratch"), filepath.Join(home, "with space")
	tests := []struct {
		name string
		env  map[string]string
		src  string
		want []string
		err  string
	}{
		{name: "absent: no roots, not declared", src: "[servers.a]\ncommand = \"x\"\n", want: nil},
		{name: "empty: declared, none", src: "[servers.a]\ncommand = \"x\"\nroots = []\n", want: []string{}},
		{name: "tilde, absolute and file URI", src: "[servers.a]\ncommand = \"x\"\nroots = [\"~/project\", \"" + scratch + "/\", \"file://" + filepath.ToSlash(spaced) + "\"]\n",
			want: []string{proj, scratch, spaced}},
		{name: "percent-encoded file URI", src: "[servers.a]\ncommand = \"x\"\nroots = [\"file://" + filepath.ToSlash(home) + "/with%20space\", \"file://localhost" + filepath.ToSlash(proj) + "\"]\n",
			want: []string{spaced, proj}},
		{name: "relative path", src: "[servers.a]\ncommand = \"x\"\nroots = [\"project\"]\n",
			err: `config.toml:3: servers.a.roots[0]: want an absolute path, ~/path or a file:// URI, got "project"`},
		{name: "missing", src: "[servers.a]\ncommand = \"x\"\nroots = [\"~/project\", \"~/nope\"]\n",
			err: `config.toml:3: servers.a.roots[1]: "` + filepath.Join(home, "nope") + `" does not exist`},
		{name: "remote host", src: "[servers.a]\ncommand = \"x\"\nroots = [\"file://example.com/etc\"]\n",
			err: `config.toml:3: servers.a.roots[0]: file:// URI names host "example.com": only local roots (file:///path) are supported`},
		{name: "other scheme", src: "[servers.a]\ncommand = \"x\"\nroots = [\"https://example.com/\"]\n",
			err: `config.toml:3: servers.a.roots[0]: want an absolute path, ~/path or a file:// URI, got "https://example.com/"`},
		{name: "twice", src: "[servers.a]\ncommand = \"x\"\nroots = [\"~/project\", \"" + proj + "\"]\n",
			err: `config.toml:3: servers.a.roots[1]: ` + proj + ` is listed twice`},
		{name: "no home", env: map[string]string{}, src: "[servers.a]\ncommand = \"x\"\nroots = [\"~/project\"]\n",
			err: `config.toml:3: servers.a.roots[0]: "~/project" starts with ~ but the home folder is unknown (HOME is not set to an absolute path)`},
		{name: "not a list", src: "[servers.a]\ncommand = \"x\"\nroots = \"~/project\"\n",
			err: `config.toml:3: servers.a.roots: want an array of strings, got string`},
		{name: "empty string", src: "[servers.a]\ncommand = \"x\"\nroots = [\"\"]\n",
			err: `config.toml:3: servers.a.roots[0]: want a path or a file:// URI, got an empty string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.env
			if e == nil {
				e = env
			}
			if _, ok := e["XDG_STATE_HOME"]; !ok {
				e["XDG_STATE_HOME"] = "/state"
			}
			srv := parseServer(t, tt.src, "config.toml", e, tt.err)
			if srv == nil {
				return
			}
			if diff := cmp.Diff(tt.want, srv.Roots); diff != "" {
				t.Errorf("roots (-want +got):\n%s", diff)
			}
			if (tt.want == nil) != (srv.Roots == nil) {
				t.Errorf("roots nil = %v, want nil = %v", srv.Roots == nil, tt.want == nil)
			}
		})
	}
}
