package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sandboxCase is one [servers.a.sandbox] table: src parsed as file
// (config.toml when empty) gives the sandbox want, or the error err (the
// file's folder trimmed).
type sandboxCase struct {
	name string
	src  string
	want *Sandbox
	err  string
	file string
}

// checkSandboxes parses each case with env and compares its error, then its
// sandbox.
func checkSandboxes(t *testing.T, env map[string]string, tests []sandboxCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := "config.toml"
			if tt.file != "" {
				file = tt.file
			}
			srv := parseServer(t, tt.src, file, env, tt.err)
			if srv == nil {
				return
			}
			if diff := cmp.Diff(tt.want, srv.Sandbox); diff != "" {
				t.Errorf("sandbox (-want +got):\n%s", diff)
			}
		})
	}
}

// parseServer parses src as the file named file with env, fails the test unless
// the error's text (the file's folder trimmed) is wantErr, and returns the first
// server, or nil when the parse failed as wanted.
func parseServer(t *testing.T, src, file string, env map[string]string, wantErr string) *Server {
	t.Helper()
	got, gotErr := parseText(src, file, env)
	if diff := cmp.Diff(wantErr, gotErr); diff != "" {
		t.Fatalf("error (-want +got):\n%s", diff)
	}
	if gotErr != "" {
		return nil
	}
	return &got.Servers[0]
}

// parseText parses src as the file named file with env, and returns the config
// and the error's text ("" for none) with the file's folder trimmed from it.
func parseText(src, file string, env map[string]string) (*Config, string) {
	got, err := Parse([]byte(src), file, envOf(env))
	if err != nil {
		return got, strings.TrimPrefix(err.Error(), filepath.Dir(file)+string(filepath.Separator))
	}
	return got, ""
}

// [servers.X.sandbox]: read and write are existing paths (~ expanded, kept as
// written too), network is none or all (none when unset), required is true unless
// set false; every invalid entry is an error naming the key, its index and line.
func TestParseSandbox(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{"project", "project/out"} {
		if err := os.Mkdir(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	proj, out := filepath.Join(home, "project"), filepath.Join(home, "project", "out")
	env := map[string]string{"HOME": home, "XDG_STATE_HOME": "/state"}
	head := "[servers.a]\ncommand = \"x\"\n[servers.a.sandbox]\n"
	tests := []sandboxCase{
		{name: "absent: no sandbox", src: "[servers.a]\ncommand = \"x\"\n", want: nil},
		{name: "empty table: fenced, no network, required", src: head,
			want: &Sandbox{Network: NetworkNone, Required: true}},
		{name: "the issue's example", src: head + "read = [\"~/project\"]\nwrite = [\"~/project/out\"]\nnetwork = \"none\"\n",
			want: &Sandbox{Read: []string{proj}, Write: []string{out}, ReadAsWritten: []string{"~/project"}, WriteAsWritten: []string{"~/project/out"},
				Network: NetworkNone, Required: true}},
		{name: "network all, not required", src: head + "network = \"all\"\nrequired = false\n",
			want: &Sandbox{Network: NetworkAll, Required: false}},
		{name: "limits", src: head + "memory = \"512MiB\"\ncpu_seconds = 60\nprocesses = 64\n",
			want: &Sandbox{Network: NetworkNone, Required: true, MemoryBytes: 512 << 20, CPUSeconds: 60, Processes: 64}},
		{name: "unknown network", src: head + "network = \"hosts\"\n",
			err: `config.toml:4: servers.a.sandbox.network: want none|all, got "hosts"`},
		{name: "missing path", src: head + "read = [\"~/project\", \"~/nope\"]\n",
			err: `config.toml:4: servers.a.sandbox.read[1]: "` + filepath.Join(home, "nope") + `" does not exist`},
		{name: "missing path with a newline", src: head + "read = [\"~/no\\nthing\"]\n",
			err: `config.toml:4: servers.a.sandbox.read[0]: "` + filepath.Join(home, "no") + `\nthing" does not exist`},
		{name: "relative write", src: head + "write = [\"out\"]\n",
			err: `config.toml:4: servers.a.sandbox.write[0]: want an absolute path, ~/path or a file:// URI, got "out"`},
		{name: "unknown key", src: head + "reads = []\n",
			err: `config.toml:4: unknown key servers.a.sandbox.reads`},
		{name: "bad memory", src: head + "memory = \"lots\"\n",
			err: `config.toml:4: servers.a.sandbox.memory: want a size such as "512MiB" or "2GiB", got "lots"`},
		{name: "http server", src: "[servers.a]\nurl = \"https://example.com/mcp\"\n[servers.a.sandbox]\n",
			err: `config.toml:3: servers.a.sandbox: only for stdio servers (command): airlock does not start an http server`},
	}
	checkSandboxes(t, env, tests)
}

// A read or write path that is a link is granted, recorded and shown as its
// target ("~/data → ~/project"), so re-pointing the link changes what drift
// compares. Writing /, the home folder, a folder holding it, or airlock's own
// config or state folder is refused, naming the key and line.
func TestParseSandboxLinksAndForbiddenPaths(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{"project/out", "state/airlock", "config/airlock"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	proj := filepath.Join(home, "project")
	if err := os.Symlink(proj, filepath.Join(home, "data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(home, "root")); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "XDG_STATE_HOME": filepath.Join(home, "state"), "XDG_CONFIG_HOME": filepath.Join(home, "config")}
	head := "[servers.a]\ncommand = \"x\"\n[servers.a.sandbox]\n"
	tests := []sandboxCase{
		{name: "link", src: head + "read = [\"~/data\"]\nwrite = [\"~/data\"]\n",
			want: &Sandbox{Read: []string{proj}, Write: []string{proj}, ReadAsWritten: []string{"~/data → ~/project"}, WriteAsWritten: []string{"~/data → ~/project"},
				Network: NetworkNone, Required: true}},
		{name: "read / is allowed", src: head + "read = [\"/\"]\n",
			want: &Sandbox{Read: []string{"/"}, ReadAsWritten: []string{"/"}, Network: NetworkNone, Required: true}},
		{name: "write /", src: head + "write = [\"/\"]\n",
			err: `config.toml:4: servers.a.sandbox.write[0]: / holds the home folder: a server that may write it may change every file of yours; list the folders it needs`},
		{name: "write a link to /", src: head + "write = [\"~/project\", \"~/root\"]\n",
			err: `config.toml:4: servers.a.sandbox.write[1]: ~/root → / holds the home folder: a server that may write it may change every file of yours; list the folders it needs`},
		{name: "write ~", src: head + "write = [\"~\"]\n",
			err: `config.toml:4: servers.a.sandbox.write[0]: ~ holds the home folder: a server that may write it may change every file of yours; list the folders it needs`},
		{name: "write the state folder", src: head + "write = [\"~/state\"]\n",
			err: `config.toml:4: servers.a.sandbox.write[0]: ~/state reaches airlock's state folder (its pins and gateway token): a fenced server may not write it`},
		{name: "write the config file's folder", src: head + "write = [\"~/project\"]\n", file: filepath.Join(home, "project", "airlock.toml"),
			err: `airlock.toml:4: servers.a.sandbox.write[0]: ~/project holds this config file: a fenced server may not write it`},
		{name: "write beside the config file", src: head + "write = [\"~/project/out\"]\n", file: filepath.Join(home, "project", "airlock.toml"),
			want: &Sandbox{Write: []string{filepath.Join(proj, "out")}, WriteAsWritten: []string{"~/project/out"}, Network: NetworkNone, Required: true}},
		{name: "write inside the config folder", src: head + "write = [\"~/config/airlock\"]\n",
			err: `config.toml:4: servers.a.sandbox.write[0]: ~/config/airlock reaches airlock's config folder: a fenced server may not write it`},
	}
	checkSandboxes(t, env, tests)
}
