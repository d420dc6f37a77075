package fence

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A missing, cut, damaged or padded report is an error: the fence is not known.
func TestReadReport(t *testing.T) {
	good := `{"applied":true,"abi":7,"rules":12,"netns":true,"no_new_privs":true}` + "\n"
	tests := []struct {
		name, in, err string
		exec          string
	}{
		{name: "applied", in: good},
		{name: "nothing", in: "", err: "sent no report"},
		{name: "cut short", in: good[:20], err: "damaged"},
		{name: "no newline", in: strings.TrimSuffix(good, "\n"), err: "cut short"},
		{name: "exec failed", in: good + `{"exec_error":"executing /x: no such file"}` + "\n", exec: "executing /x: no such file"},
		{name: "trailing junk", in: good + "junk\n", err: "trailing data"},
		{name: "two reports", in: good + good, err: "trailing data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ReadReport([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !r.Applied || r.ABI != 7 || r.ExecError != tt.exec {
				t.Fatalf("report = %+v, %v", r, err)
			}
		})
	}
}

func TestReportDetail(t *testing.T) {
	r := Report{Applied: true, ABI: 7, Rules: 30, TCP: true, Scoped: true, NetNS: true, UserNS: true, NoNewPrivs: true, FDsClosed: true}
	want := "Landlock ABI 7 (30 path rules, TCP denied, signals and abstract sockets scoped), network namespace (in a user namespace), no_new_privs, inherited descriptors closed"
	if got := r.Detail(); got != want {
		t.Errorf("Detail = %q\nwant     %q", got, want)
	}
	r = Report{Reason: "sandbox requested but Landlock is not available: kernel 5.10", NetNS: true}
	if got := r.Detail(); got != "unfenced: sandbox requested but Landlock is not available: kernel 5.10 (applied: network namespace)" {
		t.Errorf("Detail = %q", got)
	}
}

// The command's own files: the script a link points to, the interpreter of its
// "#!/usr/bin/env node" line found on the server's PATH, node's install folder
// and the outermost node_modules folder.
func TestOwnPaths(t *testing.T) {
	dir := t.TempDir()
	nodeRoot := filepath.Join(dir, "opt", "node")
	node := filepath.Join(nodeRoot, "bin", "node")
	pkg := filepath.Join(dir, "app", "node_modules", "@scope", "srv", "dist")
	for _, d := range []string{filepath.Dir(node), pkg, filepath.Join(dir, "app", "node_modules", ".bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(node, []byte("\x7fELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(pkg, "index.js")
	if err := os.WriteFile(script, []byte("#!/usr/bin/env -S node --no-warnings\nconsole.log(1)\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "app", "node_modules", ".bin", "srv")
	if err := os.Symlink("../@scope/srv/dist/index.js", link); err != nil {
		t.Fatal(err)
	}
	got, err := OwnPaths(link, []string{"PATH=/nonexistent:" + filepath.Dir(node)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{script, filepath.Join(dir, "app", "node_modules"), node, nodeRoot}
	if !slices.Equal(got, want) {
		t.Errorf("OwnPaths = %q\nwant        %q", got, want)
	}
	if _, err := OwnPaths(link, []string{"PATH=/nonexistent"}); err == nil || !strings.Contains(err.Error(), `"node" is not on the server's PATH`) {
		t.Errorf("without node on PATH: %v", err)
	}
}

func TestFencedEnv(t *testing.T) {
	got := fencedEnv([]string{"PATH=/bin", "TMPDIR=/tmp", "UV_OFFLINE=0"}, "/tmp/f", "none")
	want := []string{"PATH=/bin", "UV_OFFLINE=0", "TMPDIR=/tmp/f", "npm_config_offline=true", "PIP_NO_INDEX=1"}
	if !slices.Equal(got, want) {
		t.Errorf("fencedEnv = %q, want %q", got, want)
	}
	if got := fencedEnv([]string{"PATH=/bin"}, "/tmp/f", "all"); !slices.Equal(got, []string{"PATH=/bin", "TMPDIR=/tmp/f"}) {
		t.Errorf("network all: %q", got)
	}
}

// The Seatbelt profile denies by default, grants exactly the listed paths, allows
// the network only with network = "all", and no path can end its string.
func TestSeatbeltProfile(t *testing.T) {
	sb := Sandbox{Read: []string{"/Users/u/project"}, Write: []string{`/Users/u/out") (allow file-write* (subpath "/`}, Network: "none"}
	p := SeatbeltProfile([]string{"/opt/homebrew/bin/node"}, "/private/tmp/f", sb)
	for _, want := range []string{
		"(version 1)\n(deny default)\n",
		`(subpath "/Users/u/project")`,
		`(subpath "/opt/homebrew/bin/node")`,
		"(allow file-read* file-write*\n  (subpath \"/dev/null\")\n  (subpath \"/dev/zero\")\n  (subpath \"/private/tmp/f\")\n  (subpath \"/Users/u/out\\\") (allow file-write* (subpath \\\"/\"))\n",
		"(allow signal (target same-sandbox))",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("profile lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "network") {
		t.Errorf("network = none allows the network:\n%s", p)
	}
	sb.Network = "all"
	if p := SeatbeltProfile(nil, "", sb); !strings.Contains(p, "(allow network*)") {
		t.Errorf("network = all does not allow it:\n%s", p)
	}
}

// An interpreter installed in the home folder (~/bin/node, ~/.local/bin/python3)
// or in a folder holding it never grants the home folder, nor its install
// folder: only that folder's lib.
func TestOwnPathsNeverGrantHome(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home", "me")
	tests := []struct{ interp, prefix string }{
		{filepath.Join(home, "bin", "node"), home},
		{filepath.Join(home, ".local", "bin", "python3"), filepath.Join(home, ".local")},
		{filepath.Join(dir, "bin", "node"), dir}, // the home folder is inside the prefix
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.interp, dir), func(t *testing.T) {
			for _, d := range []string{filepath.Dir(tt.interp), filepath.Join(tt.prefix, "lib"), home} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(tt.interp, []byte("\x7fELF"), 0o755); err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(home, "srv")
			if err := os.WriteFile(script, []byte("#!/usr/bin/env "+filepath.Base(tt.interp)+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			got, err := OwnPaths(script, []string{"HOME=" + home, "PATH=" + filepath.Dir(tt.interp)})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{script, tt.interp, filepath.Join(tt.prefix, "lib")}
			if !slices.Equal(got, want) {
				t.Errorf("OwnPaths = %q\nwant        %q", got, want)
			}
		})
	}
}
