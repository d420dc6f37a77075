package trust

import (
	"path"
	"runtime"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
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
//   - windows and darwin: file names are case-insensitive by default (and on
//     darwin normalisation-insensitive), so a path that matches a glob only when
//     case is ignored and both are composed ("~/.SSH/id_rsa" against "**/.ssh/**",
//     a decomposed "Café") cannot be compared safely: it never allows, and a deny
//     or ask rule holds.
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

// lowerAll is segs as a case-insensitive volume compares names: in lower case and
// composed (NFC), because macOS's volumes also ignore Unicode normalisation
// ("Cafe" with a combining acute opens "Café"). On Windows, whose NTFS keeps the
// two spellings apart, a name that matches only once composed is then "cannot be
// compared safely": never an allow, and a deny or ask holds (fail closed).
func lowerAll(segs []string) []string {
	out := make([]string, len(segs))
	for i, s := range segs {
		out[i] = norm.NFC.String(strings.ToLower(s))
	}
	return out
}

// RealPath is a path argument as the operating system will open it, found by
// session for a server on this machine (trust does no I/O): every symbolic link
// followed and ".." applied after the link it climbs out of, components that do not
// exist yet kept as written. Path is "" when it could not be resolved safely (a loop
// of links, a folder that cannot be searched, a dangling link, a file where a
// folder must be).
type RealPath struct {
	// Path is absolute and slash-separated (drive-absolute on Windows).
	Path string
	// Why says for a person what the resolution found: the links it followed
	// ("~/project/cfg is a link to ~/.ssh") or why it could not resolve the path.
	Why string
}

// openPath is the string the operating system walks when a server opens s: a
// leading "~" expanded, and nothing else changed, because a POSIX kernel applies ".."
// after following the link before it. Windows applies "." and ".." to the string
// before it follows any link, so there it is the cleaned path. ok is false when s
// cannot be compared safely at all (clean refuses it).
func (st pathStyle) openPath(s, home string) (string, bool) {
	if st.windows {
		return st.clean(s, home)
	}
	if _, ok := st.clean(s, home); !ok {
		return "", false
	}
	if s == "~" || strings.HasPrefix(s, "~/") {
		s = strings.TrimSuffix(home, "/") + s[1:]
	}
	return s, true
}

// realVal is a path argument's resolution as the glob conditions of one call see
// it, worked out once per field.
type realVal struct {
	done    bool
	bad     bool // the path could not be resolved safely
	differs bool // the path opens another name than its cleaned form
	path    string
	segs    []string
	lower   []string
	why     string
}

// resolveReal looks the field's value up among the resolutions session passed
// (Args.WithReal); the cleaned path must be known already.
func (fm *fieldVal) resolveReal(s string, a Args) {
	rv := &fm.real
	if rv.done {
		return
	}
	rv.done = true
	open, ok := a.style.openPath(s, a.home)
	rp, found := a.real[open]
	rv.why = rp.Why
	if !ok || !found || rp.Path == "" {
		rv.bad = true
		if rv.why == "" {
			rv.why = "it was not resolved"
		}
		return
	}
	p, ok := a.style.clean(rp.Path, "")
	if !ok {
		rv.bad = true
		return
	}
	if p == fm.path {
		return
	}
	rv.differs, rv.path, rv.segs = true, p, splitPath(p)
	if a.style.fold {
		rv.lower = lowerAll(rv.segs)
	}
}

// matchPath is a glob condition on a path value. For a server on this machine
// (Args.WithReal), the path is read twice, as cleaned and as the operating system
// will open it: matched only when both are inside the glob (so an allow holds only
// then), unsafePath when just one is (a deny or ask holds, an allow does not), and
// unsafePath for a path that could not be resolved safely. A remote server's path
// is compared as cleaned.
func (c *Cond) matchPath(fm *fieldVal, s string, a Args) result {
	fm.cleanPath(s, a)
	if !fm.pathOK {
		return unsafe
	}
	cm := c.globResult(fm.segs, fm.lower)
	if a.real == nil {
		return cm
	}
	fm.resolveReal(s, a)
	if fm.real.bad {
		return unsafePath
	}
	if !fm.real.differs {
		// The path opens where it reads, but the glob's own folder may be a link
		// to it (deny ~/vault/** with ~/vault -> store, and ~/store/key named
		// directly): inside one way and not the other.
		if cm == noMatch && c.viaRoot(fm.segs, a) != noMatch {
			return unsafePath
		}
		return cm
	}
	rm := c.globResult(fm.real.segs, fm.real.lower)
	if rm != matched {
		if vr := c.viaRoot(fm.real.segs, a); vr == matched || rm == noMatch {
			rm = vr
		}
	}
	switch {
	case cm == rm:
		return cm
	case cm == unsafe:
		return unsafe
	}
	return unsafePath
}

// globResult compares a path's segments: matched, unsafe where it matches only when
// case is ignored on a system whose names are case-insensitive (never allowed by
// the rule; a deny or ask on it holds), else noMatch.
func (c *Cond) globResult(segs, lower []string) result {
	if globSegs(c.glob, c.shape, segs) {
		return matched
	}
	if c.style.fold && globSegs(c.globLower, c.shape, lower) {
		return unsafe
	}
	return noMatch
}

// viaRoot compares the resolved path with the glob whose literal leading folder
// (its root, ~/project for ~/project/**) is itself reached through a link: when
// HOME or /tmp is a link, every path under it resolves to the link's target, and
// the pattern names that same folder. The root's own resolution is in Args.WithReal
// under the root (GlobRoots).
func (c *Cond) viaRoot(real []string, a Args) result {
	if c.root == "" {
		return noMatch
	}
	rr, ok := a.real[c.root]
	if !ok || rr.Path == "" {
		return noMatch
	}
	rp, ok := a.style.clean(rr.Path, "")
	if !ok || rp == c.root {
		return noMatch
	}
	rsegs := splitPath(rp)
	if len(real) < len(rsegs) || !slices.Equal(real[:len(rsegs)], rsegs) {
		return noMatch
	}
	segs := append(slices.Clone(c.glob[:c.rootN]), real[len(rsegs):]...)
	var lower []string
	if c.style.fold {
		lower = lowerAll(segs)
	}
	return c.globResult(segs, lower)
}

// globRoot is a compiled glob's literal leading folder ("/home/ann/project" for
// ~/project/**) and its number of segments; "" for a pattern that starts with a
// wildcard.
func globRoot(segs []string, lit []bool) (string, int) {
	n := 0
	for n < len(segs) && lit[n] {
		n++
	}
	if n == 0 {
		return "", 0
	}
	if strings.HasSuffix(segs[0], ":") {
		return segs[0] + "/" + strings.Join(segs[1:n], "/"), n
	}
	return "/" + strings.Join(segs[:n], "/"), n
}

// pathNote says how a path argument's resolution changed what a rule decided: an
// allow rule set aside, or a deny or ask rule that holds through a link.
func (fm *fieldVal) pathNote(c *Cond, a Args) string {
	raw, _ := fm.v.(string)
	s := c.Field + " " + showPath(raw, a.home)
	if fm.real.bad {
		return s + " cannot be resolved safely (" + fm.real.why + ")"
	}
	if !fm.real.differs {
		return s + " is inside the rule's folder " + showPath(c.root, a.home) + " only through a link (" + a.real[c.root].Why + ")"
	}
	return s + " opens " + showPath(fm.real.path, a.home) + " (" + fm.real.why + ")"
}

// showPath is a path for a sentence: under home as "~/…", cut to 200 bytes.
func showPath(p, home string) string {
	if home != "" && home != "/" && strings.HasPrefix(p, strings.TrimSuffix(home, "/")+"/") {
		p = "~" + p[len(strings.TrimSuffix(home, "/")):]
	}
	if len(p) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(p[cut]) {
			cut--
		}
		p = p[:cut] + "…"
	}
	return p
}

// GlobRoots lists the literal leading folders of the rules' globs (GlobPaths): a
// caller that found a path argument opening another name than its cleaned form
// resolves these too and passes them in the same map.
func GlobRoots(rules []Rule) []string { return globRoots(rules, false) }

// StrictGlobRoots is GlobRoots for the deny and ask rules only: a caller resolves
// these for every call with a path argument, because a path named directly (no
// link in it) may be inside a deny rule's folder that is itself a link. An allow
// rule's folder needs no resolving then: through it the path could only be set
// aside, which an allow that does not match already is.
func StrictGlobRoots(rules []Rule) []string { return globRoots(rules, true) }

func globRoots(rules []Rule, strict bool) []string {
	var out []string
	seen := map[string]bool{}
	for i := range rules {
		if strict && rules[i].Policy == Allow {
			continue
		}
		for j := range rules[i].When {
			if c := &rules[i].When[j]; c.Kind == MatchGlob && c.root != "" && !seen[c.root] {
				seen[c.root] = true
				out = append(out, c.root)
			}
		}
	}
	return out
}
