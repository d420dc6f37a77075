package config

import (
	"errors"
	"fmt"
	"os"
	"path"
	"runtime"
	"strings"
)

// Where airlock keeps its config and state on each platform (docs/platforms.md).
// The functions here are pure over (GOOS, environment) so every platform's answer is
// tested on any platform; DefaultPath and DefaultStateDir call them with the running
// system's.
//
//	            config dir                                 state dir
//	all         $XDG_CONFIG_HOME/airlock when absolute     $XDG_STATE_HOME/airlock when absolute
//	linux, BSD  ~/.config/airlock                          ~/.local/state/airlock
//	darwin      ~/Library/Application Support/airlock      ~/Library/Application Support/airlock/state
//	windows     %APPDATA%\airlock                          %LOCALAPPDATA%\airlock

// configDirFor is airlock's config folder on goos with the environment env.
func configDirFor(goos string, env func(string) (string, bool)) (string, error) {
	if d, ok := env("XDG_CONFIG_HOME"); ok && IsAbsFor(goos, d) {
		return joinFor(goos, d, "airlock"), nil
	}
	switch goos {
	case "windows":
		d, ok := env("APPDATA")
		if !ok || !IsAbsFor(goos, d) {
			return "", errors.New("%APPDATA% is not set to an absolute path")
		}
		return joinFor(goos, d, "airlock"), nil
	case "darwin", "ios":
		home, err := homeFor(goos, env)
		return joinFor(goos, home, "Library", "Application Support", "airlock"), err
	}
	home, err := homeFor(goos, env)
	return joinFor(goos, home, ".config", "airlock"), err
}

// stateDirFor is airlock's state folder on goos with the environment env.
func stateDirFor(goos string, env func(string) (string, bool)) (string, error) {
	if d, ok := env("XDG_STATE_HOME"); ok && IsAbsFor(goos, d) {
		return joinFor(goos, d, "airlock"), nil
	}
	switch goos {
	case "windows":
		d, ok := env("LOCALAPPDATA")
		if !ok || !IsAbsFor(goos, d) {
			return "", errors.New("%LOCALAPPDATA% is not set to an absolute path")
		}
		return joinFor(goos, d, "airlock"), nil
	case "darwin", "ios":
		home, err := homeFor(goos, env)
		return joinFor(goos, home, "Library", "Application Support", "airlock", "state"), err
	}
	home, err := homeFor(goos, env)
	return joinFor(goos, home, ".local", "state", "airlock"), err
}

// homeFor is the home folder: $HOME, or %USERPROFILE% on Windows; when that is not
// set to an absolute path, the running system's answer (os.UserHomeDir).
func homeFor(goos string, env func(string) (string, bool)) (string, error) {
	name := "HOME"
	if goos == "windows" {
		name = "USERPROFILE"
	}
	if h, ok := env(name); ok && IsAbsFor(goos, h) {
		return h, nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the home folder: %w", err)
	}
	return h, nil
}

// HomeFor is the home folder on goos with the environment env (see homeFor).
func HomeFor(goos string, env func(string) (string, bool)) (string, error) {
	return homeFor(goos, env)
}

// IsAbsFor reports whether p is an absolute path on goos. On Windows that is a drive
// with a root (C:\x or C:/x) or a UNC path (\\host\share\x, \\?\C:\x); a path with a
// drive and no root (C:x) or a root and no drive (\x) depends on the current drive
// or folder and is not absolute. Elsewhere it starts with "/".
func IsAbsFor(goos, p string) bool {
	if goos != "windows" {
		return strings.HasPrefix(p, "/")
	}
	sep := func(c byte) bool { return c == '\\' || c == '/' }
	if len(p) >= 3 && isLetter(p[0]) && p[1] == ':' && sep(p[2]) {
		return true
	}
	if len(p) >= 2 && sep(p[0]) && sep(p[1]) {
		// \\host\share... or \\?\ and \\.\ device paths: a name must follow.
		rest := strings.TrimLeft(p[2:], `\/`)
		return len(rest) == len(p)-2 && rest != ""
	}
	return false
}

func isLetter(c byte) bool { u := c &^ 0x20; return 'A' <= u && u <= 'Z' }

// JoinFor joins path elements with goos's separator, as filepath.Join does on that
// system.
func JoinFor(goos string, elem ...string) string { return joinFor(goos, elem...) }

// joinFor joins path elements with goos's separator (filepath.Join on that system).
func joinFor(goos string, elem ...string) string {
	if goos != "windows" {
		return path.Join(elem...)
	}
	var b strings.Builder
	for i, e := range elem {
		if i > 0 {
			e = strings.TrimLeft(e, `\/`)
			if s := b.String(); s != "" && !strings.HasSuffix(s, `\`) {
				b.WriteByte('\\')
			}
		}
		b.WriteString(strings.TrimRight(strings.ReplaceAll(e, "/", `\`), `\`))
	}
	return b.String()
}

// isAbs is IsAbsFor on the running system.
func isAbs(p string) bool { return IsAbsFor(runtime.GOOS, p) }
