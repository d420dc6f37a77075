package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// ParseRoot turns one entry of a server's roots (an absolute path, ~ or ~/path, or a
// file:// URI) into an absolute, clean path that exists. home expands ~ ("" when
// unknown: ~ is then an error). The error says what is wrong, not where: the caller
// names the key.
func ParseRoot(entry, home string) (string, error) {
	p := entry
	switch {
	case entry == "":
		return "", errors.New("want a path or a file:// URI, got an empty string")
	case strings.HasPrefix(strings.ToLower(entry), "file:"):
		u, err := url.Parse(entry)
		if err != nil || !strings.EqualFold(u.Scheme, "file") {
			return "", fmt.Errorf("not a valid file:// URI: %q", entry)
		}
		if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
			return "", fmt.Errorf("file:// URI names host %q: only local roots (file:///path) are supported", u.Host)
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return "", fmt.Errorf("file:// URI %q has a query or fragment", entry)
		}
		p = u.Path
		if runtime.GOOS == "windows" && len(p) >= 3 && p[0] == '/' && p[2] == ':' {
			p = p[1:] // file:///C:/x is C:/x
		}
		p = filepath.FromSlash(p)
	case entry == "~" || strings.HasPrefix(entry, "~/") || runtime.GOOS == "windows" && strings.HasPrefix(entry, `~\`):
		if home == "" {
			return "", fmt.Errorf("%q starts with ~ but the home folder is unknown (HOME is not set to an absolute path)", entry)
		}
		p = filepath.Join(home, entry[1:])
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("the path contains a NUL byte")
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("want an absolute path, ~/path or a file:// URI, got %q", entry)
	}
	p = filepath.Clean(p)
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%q does not exist", p)
		}
		return "", fmt.Errorf("%q: %v", p, err)
	}
	return p, nil
}
