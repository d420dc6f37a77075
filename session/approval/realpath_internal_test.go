package approval

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/trust"
)

// pathTree is a fake home with links of every kind that matters to walkPath:
//
//	project/{notes.txt, sub/, in -> sub, cfg -> ../.ssh, chain -> cfg,
//	         abs -> HOME/.ssh, loop1 -> loop2, loop2 -> loop1,
//	         dangling -> ../nowhere, locked/ (no permissions) with secret}
//	.ssh/id_rsa, .bashrc
func pathTree(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("walkPath is the POSIX walk; Windows resolves the cleaned path")
	}
	home := filepath.Join(t.TempDir(), "home")
	for _, d := range []string{"project/sub", "project/locked", ".ssh"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"project/notes.txt", "project/locked/secret", ".ssh/id_rsa", ".bashrc"} {
		if err := os.WriteFile(filepath.Join(home, f), []byte(f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"in": "sub", "cfg": "../.ssh", "chain": "cfg", "abs": filepath.Join(home, ".ssh"),
		"loop1": "loop2", "loop2": "loop1", "dangling": "../nowhere"} {
		if err := os.Symlink(target, filepath.Join(home, "project", name)); err != nil {
			t.Skip("no symlinks here:", err)
		}
	}
	if err := os.Chmod(filepath.Join(home, "project", "locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(home, "project", "locked"), 0o700) })
	return home
}

// Every spelling of a path the rules compare, walked as the kernel walks it: what
// it opens, or why it cannot be resolved safely. Where the target exists, the
// operating system's own reading (os.Stat on the raw string) is the same file.
func TestWalkPath_Spellings(t *testing.T) {
	home := pathTree(t)
	cases := []struct {
		raw  string // under home
		want string // under home; "" cannot be resolved
		why  string
	}{
		{"project/notes.txt", "project/notes.txt", "no links"},
		{"project/in/new.txt", "project/sub/new.txt", "~/project/in is a link to ~/project/sub"},
		{"project/cfg/../.bashrc", ".bashrc", "~/project/cfg is a link to ~/.ssh"},
		{"project/cfg/id_rsa", ".ssh/id_rsa", "~/project/cfg is a link to ~/.ssh"},
		{"project//cfg/./id_rsa", ".ssh/id_rsa", "~/project/cfg is a link to ~/.ssh"},
		{"project/cfg/", ".ssh", "~/project/cfg is a link to ~/.ssh"},
		{"project/cfg/..", ".", "~/project/cfg is a link to ~/.ssh"},
		{"project/chain/../.bashrc", ".bashrc", "~/project/chain is a link to ~/project/cfg; ~/project/cfg is a link to ~/.ssh"},
		{"project/abs/id_rsa", ".ssh/id_rsa", "~/project/abs is a link to ~/.ssh"},
		{"project/sub/../../.bashrc", ".bashrc", "no links"},
		{"project/missing/../cfg/id_rsa", ".ssh/id_rsa", "~/project/cfg is a link to ~/.ssh"},
		{"project/missing/x/../y", "project/missing/y", "no links"},
		{"project/missing/../../.bashrc", ".bashrc", "no links"},
		{"project/loop1/x", "", "more than 255 links"},
		{"project/loop1", "", "more than 255 links"},
		{"project/dangling", "", "~/project/dangling is a link to ~/nowhere, which does not exist"},
		{"project/dangling/x", "", "which does not exist"},
		{"project/notes.txt/../x", "", "~/project/notes.txt is not a folder"},
		{"project/notes.txt/", "", "is not a folder"},
	}
	if runtime.GOOS == "linux" {
		cases = append(cases, struct{ raw, want, why string }{"../../../../../../../../../../proc/self/cwd/x", "", "/proc/self is a link that names the opening process's own files"},
			struct{ raw, want, why string }{"../../../../../../../../../../dev/fd/0", "", "is a link that names the opening process's own files"})
	}
	cases = append(cases, struct{ raw, want, why string }{strings.Repeat("project/sub/../../", 300) + ".bashrc", "", "longer than 4096 bytes"})
	if os.Geteuid() != 0 { // root may search any folder
		cases = append(cases, struct{ raw, want, why string }{"project/locked/secret", "", "airlock cannot look up ~/project/locked/secret: permission denied"})
	}
	for _, tc := range cases {
		t.Run(tc.raw, func(t *testing.T) {
			raw := home + "/" + tc.raw
			got := walkPath(raw, home, os.Lstat, os.Readlink)
			want := ""
			if tc.want != "" {
				want = filepath.Join(home, tc.want)
			}
			if got.Path != want || !strings.Contains(got.Why, tc.why) {
				t.Errorf("walkPath(%s) = %q (%s), want %q (%s)", tc.raw, got.Path, got.Why, want, tc.why)
			}
			if got.Path == "" {
				return
			}
			osInfo, err := os.Stat(raw)
			if err != nil {
				return // does not exist yet: the fuzz target creates such files
			}
			ours, err := os.Stat(got.Path)
			if err != nil || !os.SameFile(osInfo, ours) {
				t.Errorf("%s opens another file than %s (%v)", tc.raw, got.Path, err)
			}
		})
	}
}

// A folder airlock may not search (root searches every folder, so the refusal is
// the lstat's): the path cannot be resolved safely, and the sentence says where.
func TestWalkPath_PermissionDenied(t *testing.T) {
	home := pathTree(t)
	locked := filepath.Join(home, "project", "locked")
	lstat := func(p string) (fs.FileInfo, error) {
		if strings.HasPrefix(p, locked+string(filepath.Separator)) {
			return nil, &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrPermission}
		}
		return os.Lstat(p)
	}
	got := walkPath(locked+"/secret", home, lstat, os.Readlink)
	if got.Path != "" || !strings.Contains(got.Why, "airlock cannot look up ~/project/locked/secret: permission denied") {
		t.Errorf("walkPath through a folder without permission = %q (%s)", got.Path, got.Why)
	}
}

// FuzzWalkPathAgreesWithOS builds a random tree of links, walks a random path
// through it, and has the operating system open the same raw string as a server
// would (creating the file, after creating its missing folders as a server that
// makes them does): whatever the system opened is what walkPath said, and the
// rules built on it hold: allow <tree>/a/** never allows a file the system put
// outside a, and deny **/c/** denies every file the system put inside c.
func FuzzWalkPathAgreesWithOS(f *testing.F) {
	if runtime.GOOS == "windows" {
		f.Skip("walkPath is the POSIX walk")
	}
	for _, seed := range [][]byte{
		{1, 2, 3, 4, 3, 7, 11, 10}, // l0 -> ../c ... then ".."
		{0, 0, 0, 0, 0, 1, 10},
		{6, 7, 8, 9, 4, 5, 6, 7, 10},
		{2, 5, 3, 1, 0, 3, 7, 2, 10},
	} {
		f.Add(seed)
	}
	targets := []string{"a", "../c", "..", ".", "b", "@/c", "l0", "../l1", "missing", "a/b/..", "../../a", "@/a/b"}
	comps := []string{"a", "b", "c", "l0", "l1", "l2", "l3", "..", ".", "", "f", "missing"}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 5 || len(data) > 24 {
			return
		}
		root := t.TempDir()
		for _, d := range []string{"a/b", "c"} {
			if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
				t.Fatal(err)
			}
		}
		for i, dir := range []string{"", "a", "a/b", "c"} {
			target := strings.Replace(targets[int(data[i])%len(targets)], "@", root, 1)
			if err := os.Symlink(target, filepath.Join(root, dir, "l"+string(rune('0'+i)))); err != nil {
				t.Skip("no symlinks here:", err)
			}
		}
		parts := make([]string, 0, len(data)-4)
		for _, b := range data[4:] {
			parts = append(parts, comps[int(b)%len(comps)])
		}
		raw := root + "/" + strings.Join(parts, "/")
		got := walkPath(raw, "", os.Lstat, os.Readlink)

		allow, _ := trust.NewCond("path", trust.MatchGlob, root+"/a/**", "")
		deny, _ := trust.NewCond("path", trust.MatchGlob, "**/c/**", "")
		ra, _ := trust.NewRule("allow-a", trust.Allow, "", []trust.Cond{allow})
		rd, _ := trust.NewRule("deny-c", trust.Deny, "", []trust.Cond{deny})
		rules := []trust.Rule{ra, rd}
		args, _ := json.Marshal(map[string]string{"path": raw})
		rule, _ := ruleFor([]*trust.RuleSet{trust.NewRuleSet(rules)}, [][]trust.Rule{rules}, args, "", true, nil)

		fh, err := os.OpenFile(raw, os.O_WRONLY|os.O_CREATE, 0o600)
		if errors.Is(err, fs.ErrNotExist) && os.MkdirAll(filepath.Dir(raw), 0o700) == nil {
			fh, err = os.OpenFile(raw, os.O_WRONLY|os.O_CREATE, 0o600)
		}
		if err != nil {
			return // nothing opened: no server writes there
		}
		opened, err := fh.Stat()
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got.Path != "" {
			ours, err := os.Stat(got.Path)
			if err != nil || !os.SameFile(opened, ours) {
				t.Fatalf("%s: walkPath says %s (%s), the system opened another file (%v)", raw, got.Path, got.Why, err)
			}
		}
		where, err := filepath.EvalSymlinks(raw)
		if err != nil {
			t.Fatalf("%s was opened, but does not resolve: %v", raw, err)
		}
		realRoot, _ := filepath.EvalSymlinks(root)
		inside := func(dir string) bool {
			d := filepath.Join(realRoot, dir)
			return where == d || strings.HasPrefix(where, d+"/")
		}
		if rule != nil && rule.Policy == trust.Allow && !inside("a") {
			t.Fatalf("%s: allowed by a/**, but the system opened %s", raw, where)
		}
		if inside("c") && (rule == nil || rule.Policy != trust.Deny) {
			t.Fatalf("%s: the system opened %s, inside c, but deny **/c/** did not decide (%v)", raw, where, rule)
		}
	})
}

// BenchmarkWalkPath is one decision's walk of a five-component path that exists,
// through one link.
func BenchmarkWalkPath(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "home", "project", "src"), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink("src", filepath.Join(dir, "home", "project", "in")); err != nil {
		b.Skip(err)
	}
	p := filepath.Join(dir, "home", "project", "in", "main.go")
	for b.Loop() {
		if r := walkPath(p, "", os.Lstat, os.Readlink); r.Path == "" {
			b.Fatal(r.Why)
		}
	}
}

// BenchmarkEvalSymlinks is the same path through filepath.EvalSymlinks (what the
// cleaned path's resolution cost before), for comparison.
func BenchmarkEvalSymlinks(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "home", "project", "src"), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink("src", filepath.Join(dir, "home", "project", "in")); err != nil {
		b.Skip(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "home", "project", "src", "main.go"), nil, 0o600); err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(dir, "home", "project", "in", "main.go")
	for b.Loop() {
		if _, err := filepath.EvalSymlinks(p); err != nil {
			b.Fatal(err)
		}
	}
}
