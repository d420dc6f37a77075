package trust

import (
	"path"
	"runtime"
	"strings"
	"unicode/utf8"
)

// How a glob reads paths depends on the operating system airlock runs on: a pure
// function of GOOS (docs/platforms.md), so that Linux tests cover every platform.
//
//   - windows: a path is drive-absolute (C:\Users\me or C:/Users/me), "\" and "/"
//     both separate, the drive letter is upper-cased, and ".." never climbs above
//     the drive. A UNC or device path (\\server\share, \\?\C:\), a drive-relative
//     (C:x) or rooted path without a drive (\Users), and a segment Windows would
//     read as another name (a trailing dot or space: ".ssh." is ".ssh"; an
//     alternate data stream "a:b"; an 8.3 short name "PROGRA~1") cannot be
//     compared safely.
//   - windows and darwin: file names are case-insensitive by default, so a path
//     that matches a glob only when case is ignored ("~/.SSH/id_rsa" against
//     "**/.ssh/**") cannot be compared safely: it never allows, and a deny or ask
//     rule holds.
//   - every other system: "/" separates, case is exact.

// pathStyle is how paths are read on one operating system.
type pathStyle struct {
	windows bool // drive letters, "\" separates
	fold    bool // names are case-insensitive by default
}

func styleFor(goos string) pathStyle {
	switch goos {
	case "windows":
		return pathStyle{windows: true, fold: true}
	case "darwin", "ios":
		return pathStyle{fold: true}
	}
	return pathStyle{}
}

// hostStyle is the style of the system airlock was built for.
var hostStyle = styleFor(runtime.GOOS)

// CleanPathFor is CleanPath for the paths of operating system goos.
func CleanPathFor(goos, s, home string) (string, bool) { return styleFor(goos).clean(s, home) }

// clean is what a glob compares: the value with a leading "~" expanded by home,
// cleaned lexically; ok is false when it cannot be compared safely.
func (st pathStyle) clean(s, home string) (string, bool) {
	if strings.ContainsRune(s, 0) || !utf8.ValidString(s) {
		return "", false
	}
	if !st.windows {
		return cleanPosix(s, home)
	}
	s = strings.ReplaceAll(s, `\`, "/")
	if s == "~" || strings.HasPrefix(s, "~/") {
		h, ok := windowsAbs(strings.ReplaceAll(home, `\`, "/"))
		if !ok {
			return "", false
		}
		s = strings.TrimSuffix(h, "/") + s[1:]
	}
	abs, ok := windowsAbs(s)
	if !ok {
		return "", false
	}
	for _, seg := range splitPath(abs)[1:] {
		if !windowsSegmentOK(seg) {
			return "", false
		}
	}
	return abs, true
}

func cleanPosix(s, home string) (string, bool) {
	if s == "~" || strings.HasPrefix(s, "~/") {
		if home == "" || !strings.HasPrefix(home, "/") {
			return "", false
		}
		s = strings.TrimSuffix(home, "/") + s[1:]
	}
	if !strings.HasPrefix(s, "/") || strings.Contains(s, `\`) {
		return "", false
	}
	return path.Clean(s), true
}

// windowsAbs cleans a drive-absolute path written with "/" ("c:/a/../b" is
// "C:/b"); false for anything else (UNC, device, drive-relative, no drive).
func windowsAbs(s string) (string, bool) {
	if len(s) < 3 || s[1] != ':' || s[2] != '/' || !isLetter(s[0]) {
		return "", false
	}
	drive := strings.ToUpper(s[:1]) + ":"
	rest := path.Clean(s[2:]) // rooted: ".." stops at the drive's root
	if rest == "/" {
		return drive + "/", true
	}
	return drive + rest, true
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// windowsSegmentOK reports whether Windows reads the name as written: no trailing
// dot or space (stripped by Windows), no ':' (a data stream), no 8.3 short name.
func windowsSegmentOK(seg string) bool {
	if seg == "" {
		return true
	}
	if strings.HasSuffix(seg, ".") || strings.HasSuffix(seg, " ") || strings.ContainsRune(seg, ':') {
		return false
	}
	if i := strings.IndexByte(seg, '~'); i >= 0 && i+1 < len(seg) && seg[i+1] >= '0' && seg[i+1] <= '9' {
		return false
	}
	return true
}

// compileGlob expands "~", requires an absolute pattern (or one starting with "**"),
// and cleans it; ".." is refused in a pattern. On Windows a pattern may use "\" and
// must name its drive (C:\Users\me\project\**), or start with ~ or **.
func (st pathStyle) compileGlob(p, home string) ([]string, error) {
	if st.windows {
		p = strings.ReplaceAll(p, `\`, "/")
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		h := home
		if st.windows {
			var ok bool
			if h, ok = windowsAbs(strings.ReplaceAll(home, `\`, "/")); !ok {
				return nil, ruleError("glob starts with ~ but the home folder is not known")
			}
		} else if home == "" || !strings.HasPrefix(home, "/") {
			return nil, ruleError("glob starts with ~ but the home folder is not known")
		}
		p = strings.TrimSuffix(h, "/") + p[1:]
	}
	if strings.ContainsRune(p, 0) || !st.windows && strings.Contains(p, `\`) {
		return nil, ruleError("glob uses / as the separator and may not contain \\ or NUL")
	}
	drive := ""
	if st.windows {
		if len(p) >= 3 && p[1] == ':' && p[2] == '/' && isLetter(p[0]) {
			drive, p = strings.ToUpper(p[:1])+":", p[2:]
		} else if p != "**" && !strings.HasPrefix(p, "**/") {
			return nil, ruleError(`glob must start with a drive (C:\...), ~\ or **\`)
		}
	} else if !strings.HasPrefix(p, "/") && p != "**" && !strings.HasPrefix(p, "**/") {
		return nil, ruleError("glob must be an absolute path, start with ~/ or start with **/")
	}
	for _, s := range strings.Split(p, "/") {
		if s == ".." || s == "." {
			return nil, ruleError("glob may not contain . or .. segments")
		}
		if strings.Contains(s, "**") && s != "**" {
			return nil, ruleError("** must be a whole path segment")
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, ruleError("glob segment " + `"` + s + `"` + " is malformed")
		}
	}
	absolute := strings.HasPrefix(p, "/")
	p = path.Clean(p)
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if absolute && segs[0] == "" {
		segs = nil // the root itself
	}
	if drive != "" {
		segs = append([]string{drive}, segs...)
	}
	return segs, nil
}

// splitPath is a cleaned path's segments: "/a/b" is [a b], "C:/a" is [C: a].
func splitPath(p string) []string {
	switch {
	case p == "/":
		return nil
	case strings.HasPrefix(p, "/"):
		return strings.Split(p[1:], "/")
	case strings.HasSuffix(p, ":/"):
		return []string{p[:len(p)-1]}
	}
	return strings.Split(p, "/")
}

func lowerAll(segs []string) []string {
	out := make([]string, len(segs))
	for i, s := range segs {
		out[i] = strings.ToLower(s)
	}
	return out
}
