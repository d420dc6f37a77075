package trust

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// Globs on Windows paths, decided as a pure function of GOOS so that these run on
// Linux: backslashes and slashes, drive-letter case, ".."
// stopping at the drive, ~ from a Windows home, and the names Windows reads as
// another name (trailing dot or space, data streams, 8.3 short names), UNC and
// drive-relative paths; case-insensitive names (windows, darwin) never allow by a
// case-folded match and always meet a deny rule that way; on darwin, whose volumes
// compare names after Unicode normalisation, the same holds for a name that matches
// only once both are normalised (Cafe+U+0301 is Café).
func TestRules_GlobPerGOOS(t *testing.T) {
	const winHome = `C:\Users\me`
	type tc struct {
		goos, glob, value string
		want              result
	}
	cases := []tc{
		// windows: separators, drive case, cleaning
		{"windows", `C:\Users\me\project\**`, `C:\Users\me\project\src\main.go`, matched},
		{"windows", `C:\Users\me\project\**`, `C:/Users/me/project/src/main.go`, matched},
		{"windows", `C:\Users\me\project\**`, `c:\Users\me\project\a.txt`, matched},
		{"windows", `c:/Users/me/project/**`, `C:\Users\me\project\a.txt`, matched},
		{"windows", `C:\Users\me\project\**`, `C:\Users\me\project`, matched},
		{"windows", `C:\Users\me\project\**`, `C:\Users\me\project\..\.ssh\id_rsa`, noMatch},
		{"windows", `C:\Users\me\project\**`, `C:\Users\me\project\..\..\..\..\..\Users\me\project\x`, matched},
		{"windows", `C:\Users\me\project\**`, `D:\Users\me\project\x`, noMatch},
		{"windows", `~\project\**`, `C:\Users\me\project\x`, matched},
		{"windows", `~/project/**`, `~\project\x`, matched},
		{"windows", `**\.ssh\**`, `C:\Users\me\.ssh\id_rsa`, matched},
		{"windows", `**/.ssh/**`, `D:\backup\.ssh\id_rsa`, matched},
		// windows: case-insensitive names
		{"windows", `C:\Users\me\project\**`, `C:\users\ME\Project\a.txt`, unsafe},
		{"windows", `**\.ssh\**`, `C:\Users\me\.SSH\id_rsa`, unsafe},
		// windows: values that cannot be compared safely
		{"windows", `C:\Users\me\project\**`, `\\server\share\project\x`, unsafe},
		{"windows", `C:\Users\me\project\**`, `\\?\C:\Users\me\project\x`, unsafe},
		{"windows", `C:\Users\me\project\**`, `C:project\x`, unsafe},
		{"windows", `C:\Users\me\project\**`, `\Users\me\project\x`, unsafe},
		{"windows", `C:\Users\me\project\**`, `project\x`, unsafe},
		{"windows", `C:\Users\me\project\**`, `/home/me/project/x`, unsafe},
		{"windows", `**\.ssh\**`, `C:\Users\me\.ssh.\id_rsa`, unsafe},
		{"windows", `**\.ssh\**`, `C:\Users\me\.ssh \id_rsa`, unsafe},
		{"windows", `C:\Users\me\project\**`, `C:\Users\me\project\a.txt:secret`, unsafe},
		{"windows", `C:\Users\me\project\**`, `C:\Users\me\PROJEC~1\a.txt`, unsafe},
		// linux: exact, backslash is not a separator and cannot be compared
		{"linux", `/home/me/project/**`, `/home/me/project/a`, matched},
		{"linux", `/home/me/project/**`, `/home/me/Project/a`, noMatch},
		{"linux", `**/.ssh/**`, `/home/me/.SSH/id_rsa`, noMatch},
		{"linux", `/home/me/project/**`, `C:\Users\me\project\a`, unsafe},
		{"linux", `/home/me/project/**`, `/home/me/project\..\..\x`, unsafe},
		// darwin: "/" like linux, names case-insensitive
		{"darwin", `/Users/me/project/**`, `/Users/me/project/a`, matched},
		{"darwin", `/Users/me/project/**`, `/users/me/PROJECT/a`, unsafe},
		{"darwin", `**/.ssh/**`, `/Users/me/.SSH/id_rsa`, unsafe},
		{"darwin", `**/.ssh/**`, `/Users/me/.sshx/id_rsa`, noMatch},
		// darwin: APFS and HFS+ open a decomposed name as the composed one
		{"darwin", "/Users/me/Caf\u00e9/**", "/Users/me/Cafe\u0301/notes", unsafe},
		{"darwin", "/Users/me/Cafe\u0301/**", "/Users/me/Caf\u00e9/notes", unsafe},
		{"darwin", "/Users/me/Caf\u00e9/**", "/Users/me/CAFE\u0301/notes", unsafe},
		{"darwin", "/Users/me/Caf\u00e9/**", "/Users/me/Caf\u00e9/notes", matched},
		// a look-alike is another name on every system: Cyrillic dze is not s
		{"darwin", `**/.ssh/**`, "/Users/me/.\u0455sh/id_rsa", noMatch},
		{"linux", `**/.ssh/**`, "/home/me/.\u0455sh/id_rsa", noMatch},
		// linux: names are bytes, a decomposed name is another file
		{"linux", "/home/me/Caf\u00e9/**", "/home/me/Cafe\u0301/notes", noMatch},
	}
	for _, c := range cases {
		home := "/home/me"
		if c.goos == "windows" {
			home = winHome
		}
		cond, err := NewCondFor(c.goos, "path", MatchGlob, c.glob, home)
		if err != nil {
			t.Errorf("%s %s: %v", c.goos, c.glob, err)
			continue
		}
		args, _ := json.Marshal(map[string]string{"path": c.value})
		a := DecodeArgsFor(c.goos, args, home, nil)
		if got := cond.eval(a); got != c.want {
			t.Errorf("%s: glob %s, value %s: %v, want %v", c.goos, c.glob, c.value, got, c.want)
		}
		// The index agrees: an allow rule decides only a match, a deny rule a
		// match or a value that cannot be compared.
		for _, policy := range []Action{Allow, Deny} {
			r, _ := NewRule("r", policy, "", []Cond{cond})
			got := NewRuleSet([]Rule{r}).Match(DecodeArgsFor(c.goos, args, home, nil)) != nil
			want := c.want == matched || c.want == unsafe && policy != Allow
			if got != want {
				t.Errorf("%s %s: glob %s, value %s: matched %v, want %v", c.goos, policy, c.glob, c.value, got, want)
			}
		}
	}
	// Patterns: a Windows glob names its drive (or starts with ~ or **).
	for _, bad := range []string{`Users\me\**`, `\Users\me\**`, `\\server\share\**`, `C:\Users\..\x`} {
		if _, err := NewCondFor("windows", "path", MatchGlob, bad, winHome); err == nil {
			t.Errorf("windows glob %s was accepted", bad)
		}
	}
	if _, err := NewCondFor("linux", "path", MatchGlob, `C:\Users\**`, "/home/me"); err == nil {
		t.Error(`linux accepted a glob with "\"`)
	}
	if p, ok := CleanPathFor("windows", `c:\a\..\..\b`, ""); !ok || p != "C:/b" {
		t.Errorf(`CleanPathFor(windows, c:\a\..\..\b) = %q %v`, p, ok)
	}
}

// A path's resolution per GOOS: the key is the value as the system walks it (on
// Windows, which applies ".." before links, the cleaned path; elsewhere the raw
// value with ~ expanded), and case-insensitive names stay unsafe through a link.
func TestRules_GlobThroughLinksPerGOOS(t *testing.T) {
	type tc struct {
		goos, glob, value, key, resolved string
		want                             result
	}
	cases := []tc{
		{"windows", `C:\Users\me\project\**`, `C:\Users\me\project\cfg\..\x`, "C:/Users/me/project/x", "C:/Users/me/project/x", matched},
		{"windows", `C:\Users\me\project\**`, `c:\Users\me\project\cfg\id_rsa`, "C:/Users/me/project/cfg/id_rsa", "C:/Users/me/.ssh/id_rsa", unsafePath},
		{"windows", `**\.ssh\**`, `C:\Users\me\project\cfg\id_rsa`, "C:/Users/me/project/cfg/id_rsa", `C:\Users\me\.ssh\id_rsa`, unsafePath},
		{"windows", `C:\Users\me\project\**`, `C:\Users\me\project\j\x`, "C:/Users/me/project/j/x", `\\server\share\x`, unsafePath},
		{"darwin", `/Users/me/project/**`, `/Users/me/project/cfg/../x`, "/Users/me/project/cfg/../x", "/Users/me/x", unsafePath},
		{"darwin", `**/.ssh/**`, `/Users/me/project/cfg/id_rsa`, "/Users/me/project/cfg/id_rsa", "/Users/me/.SSH/id_rsa", unsafePath},
		{"darwin", `/Users/me/project/**`, `/Users/me/project/in/x`, "/Users/me/project/in/x", "/Users/me/PROJECT/sub/x", unsafePath},
		{"darwin", `/Users/me/project/**`, `/Users/me/project/in/x`, "/Users/me/project/in/x", "/Users/me/project/sub/x", matched},
		{"linux", `/home/me/project/**`, `~/project/cfg/../x`, "/home/me/project/cfg/../x", "/home/me/x", unsafePath},
		{"linux", `/home/me/project/**`, `~/project/cfg/../x`, "/home/me/project/x", "/home/me/project/x", unsafePath}, // keyed by the cleaned path: not the walk
	}
	for _, c := range cases {
		home := "/home/me"
		if c.goos == "windows" {
			home = `C:\Users\me`
		}
		cond, err := NewCondFor(c.goos, "path", MatchGlob, c.glob, home)
		if err != nil {
			t.Fatal(err)
		}
		args, _ := json.Marshal(map[string]string{"path": c.value})
		a := DecodeArgsFor(c.goos, args, home, map[string]RealPath{c.key: {Path: c.resolved, Why: "test"}})
		if got := cond.eval(a); got != c.want {
			t.Errorf("%s: glob %s, value %s opening %s: %v, want %v", c.goos, c.glob, c.value, c.resolved, got, c.want)
		}
	}
}

// A glob whose own folder is a link: a path named directly (it opens where it
// reads) inside the folder the link leads to meets a deny or ask rule on the
// link's folder, and an allow rule on it does not allow the direct name; the
// index does not narrow the rules away when some folder is a link.
func TestRules_GlobFolderIsALink(t *testing.T) {
	const home = "/home/me"
	real := map[string]RealPath{
		"/home/me/store/key": {Path: "/home/me/store/key", Why: "no links"},
		"/home/me/vault":     {Path: "/home/me/store", Why: "~/vault is a link to ~/store"},
	}
	args := []byte(`{"path":"~/store/key"}`)
	for _, c := range []struct {
		policy Action
		want   bool
	}{{Deny, true}, {Ask, true}, {Allow, false}} {
		r := mustRule(t, "vault", c.policy, mustCond(t, "path", MatchGlob, "/home/me/vault/**"))
		other := mustRule(t, "elsewhere", c.policy, mustCond(t, "path", MatchGlob, "/srv/**"))
		got, notes := MatchRuleSetsNoting(DecodeArgs(args, home, real), NewRuleSet([]Rule{other, r}))
		if (got != nil) != c.want {
			t.Errorf("%s ~/vault/** on ~/store/key: matched %v, want %v", c.policy, got, c.want)
		}
		if c.want && !slices.ContainsFunc(notes, func(n string) bool {
			return strings.Contains(n, "inside the rule's folder ~/vault only through a link (~/vault is a link to ~/store)")
		}) {
			t.Errorf("%s: notes %q", c.policy, notes)
		}
	}
	// Without the folder's resolution the direct name is outside.
	deny := mustRule(t, "vault", Deny, mustCond(t, "path", MatchGlob, "/home/me/vault/**"))
	delete(real, "/home/me/vault")
	if got := MatchRules([]Rule{deny}, DecodeArgs(args, home, real)); got != nil {
		t.Errorf("with ~/vault not a link the deny matched")
	}
}
