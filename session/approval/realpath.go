package approval

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/airlock-mcp/airlock/trust"
)

// maxLinks is how many symbolic links one path may pass through before it counts as
// a loop (filepath.EvalSymlinks' bound; Linux stops at 40).
const maxLinks = 255

// maxPathBytes is the longest path walked (Linux's PATH_MAX, which the kernel
// refuses to open beyond): an agent's 4 MiB of "sub/../" would otherwise cost half
// a million lstat calls per decision.
const maxPathBytes = 4096

// resolveOpen is how the operating system opens p (an absolute path as
// trust.Args.GlobPaths gives it: "~" expanded, nothing cleaned), for the glob
// rules of a server on this machine. On Windows the system applies "." and ".."
// to the string before it follows a link, so p is already clean and only its links
// are resolved; elsewhere the path is walked component by component as the kernel
// does (walkPath). home shortens the paths the sentences name.
func resolveOpen(p, home string) trust.RealPath {
	if runtime.GOOS == "windows" {
		return resolveCleaned(p)
	}
	return walkPath(p, home, os.Lstat, os.Readlink)
}

// walkPath resolves p as a POSIX kernel walks it: each component is looked up in
// the folder reached so far; a symbolic link is replaced by its target (a relative
// one read from the link's folder) before the next component, so ".." climbs from
// where the link led; "." and empty components (//) change nothing. From the first
// component that does not exist on, the rest is kept as written, ".." taking back
// those names: that is where a server that creates the missing folders writes. It
// cannot be resolved safely (Path "") through a loop of links (more than
// maxLinks), a component it may not look up (a folder without search permission),
// a link whose target does not exist (a write through it would create a file
// airlock cannot see), or a file where a folder must be.
func walkPath(p, home string, lstat func(string) (fs.FileInfo, error), readlink func(string) (string, error)) trust.RealPath {
	if !strings.HasPrefix(p, "/") {
		return trust.RealPath{Why: "it is not an absolute path"}
	}
	if len(p) > maxPathBytes {
		return trust.RealPath{Why: "it is longer than " + strconv.Itoa(maxPathBytes) + " bytes"}
	}
	dest := "/"    // the folder reached so far, every link in it resolved
	missing := 0   // trailing components of dest that do not exist
	rest := p      // what is still to walk
	var ends []int // per link being walked: len(rest) once its target is walked
	var links []string
	followed := 0
	for {
		rest = strings.TrimLeft(rest, "/")
		for len(ends) > 0 && len(rest) <= ends[len(ends)-1] {
			ends = ends[:len(ends)-1]
		}
		if rest == "" {
			break
		}
		comp := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			comp = rest[:i]
		}
		rest = rest[len(comp):]
		more := rest != "" // a "/" follows: the name must be a folder
		switch comp {
		case ".":
			continue
		case "..":
			dest = path.Dir(dest)
			if missing > 0 {
				missing--
			}
			continue
		}
		next := path.Join(dest, comp)
		if missing > 0 {
			dest, missing = next, missing+1
			continue
		}
		fi, err := lstat(filepath.FromSlash(next))
		if errors.Is(err, fs.ErrNotExist) {
			if len(ends) > 0 {
				return trust.RealPath{Why: joinLinks(links) + ", which does not exist"}
			}
			dest, missing = next, 1
			continue
		}
		if err != nil {
			return trust.RealPath{Why: "airlock cannot look up " + shortPath(next, home) + ": " + errText(err)}
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if more && !fi.IsDir() {
				return trust.RealPath{Why: shortPath(next, home) + " is not a folder"}
			}
			dest = next
			continue
		}
		if strings.HasPrefix(next, "/proc/") {
			// /proc/self, /proc/PID/cwd, /proc/PID/root and /proc/PID/fd/N (and
			// /dev/fd, a link to /proc/self/fd) name files of the process that
			// opens them: airlock's walk would see its own, not the server's.
			return trust.RealPath{Why: shortPath(next, home) + " is a link that names the opening process's own files"}
		}
		followed++
		if followed > maxLinks {
			return trust.RealPath{Why: "it passes through more than 255 links (a loop of links at " + shortPath(next, home) + ")"}
		}
		target, err := readlink(filepath.FromSlash(next))
		if err != nil || target == "" {
			return trust.RealPath{Why: "airlock cannot read the link " + shortPath(next, home)}
		}
		target = filepath.ToSlash(target)
		lexical := target
		if !strings.HasPrefix(target, "/") {
			lexical = path.Join(dest, target)
		} else {
			dest = "/"
		}
		if len(links) < 3 {
			links = append(links, shortPath(next, home)+" is a link to "+shortPath(path.Clean(lexical), home))
		}
		ends = append(ends, len(rest))
		if rest == "" {
			rest = target
		} else {
			rest = target + "/" + rest
		}
	}
	return trust.RealPath{Path: dest, Why: joinLinks(links)}
}

func joinLinks(links []string) string {
	if len(links) == 0 {
		return "no links"
	}
	return strings.Join(links, "; ")
}

// errText is an lstat error without the path it repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// shortPath writes a path under home as "~/…".
func shortPath(p, home string) string {
	h := strings.TrimSuffix(home, "/")
	if h != "" && (p == h || strings.HasPrefix(p, h+"/")) {
		return "~" + p[len(h):]
	}
	return p
}

// resolveCleaned resolves every symbolic link of an absolute, cleaned path (Windows,
// where ".." is applied before links): the longest part that exists is resolved,
// the rest (not yet created) appended. A loop, a permission error or a dangling
// link cannot be resolved safely.
func resolveCleaned(p string) trust.RealPath {
	native := filepath.FromSlash(p)
	rest := ""
	for cur := native; ; {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			out := filepath.ToSlash(filepath.Join(r, rest))
			why := "no links"
			if out != p {
				why = "it is reached through a link"
			}
			return trust.RealPath{Path: out, Why: why}
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return trust.RealPath{Why: "airlock cannot resolve its links: " + errText(err)}
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return trust.RealPath{Why: "airlock cannot resolve its links"}
		}
		// a dangling link is a name that exists: refuse rather than guess
		if _, lerr := os.Lstat(cur); lerr == nil {
			return trust.RealPath{Why: cur + " is a link whose target does not exist"}
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
