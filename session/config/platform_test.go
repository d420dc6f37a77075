package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Config and state folders follow the platform, with XDG variables
// honoured when set, for every GOOS, tested here on any.
func TestPlatformDirs(t *testing.T) {
	win := map[string]string{
		"USERPROFILE":  `C:\Users\ana`,
		"APPDATA":      `C:\Users\ana\AppData\Roaming`,
		"LOCALAPPDATA": `C:\Users\ana\AppData\Local`,
	}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for a, b := range m {
			out[a] = b
		}
		return out
	}
	for _, tt := range []struct {
		name, goos         string
		env                map[string]string
		wantCfg, wantState string
	}{
		{"linux", "linux", map[string]string{"HOME": "/home/ana"}, "/home/ana/.config/airlock", "/home/ana/.local/state/airlock"},
		{"linux xdg", "linux", map[string]string{"HOME": "/home/ana", "XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s"}, "/c/airlock", "/s/airlock"},
		{"linux relative xdg ignored", "linux", map[string]string{"HOME": "/home/ana", "XDG_CONFIG_HOME": "c", "XDG_STATE_HOME": "s"}, "/home/ana/.config/airlock", "/home/ana/.local/state/airlock"},
		{"freebsd", "freebsd", map[string]string{"HOME": "/usr/home/ana"}, "/usr/home/ana/.config/airlock", "/usr/home/ana/.local/state/airlock"},
		{"darwin", "darwin", map[string]string{"HOME": "/Users/ana"}, "/Users/ana/Library/Application Support/airlock", "/Users/ana/Library/Application Support/airlock/state"},
		{"darwin xdg", "darwin", map[string]string{"HOME": "/Users/ana", "XDG_CONFIG_HOME": "/Users/ana/.config", "XDG_STATE_HOME": "/Users/ana/.local/state"}, "/Users/ana/.config/airlock", "/Users/ana/.local/state/airlock"},
		{"windows", "windows", win, `C:\Users\ana\AppData\Roaming\airlock`, `C:\Users\ana\AppData\Local\airlock`},
		{"windows trailing separator", "windows", map[string]string{"APPDATA": `D:\Roam\`, "LOCALAPPDATA": `D:/Local/`}, `D:\Roam\airlock`, `D:\Local\airlock`},
		{"windows xdg", "windows", with(with(win, "XDG_CONFIG_HOME", `C:\xdg\config`), "XDG_STATE_HOME", `C:/xdg/state`), `C:\xdg\config\airlock`, `C:\xdg\state\airlock`},
		{"windows unix-style xdg ignored", "windows", with(win, "XDG_STATE_HOME", "/home/ana/.local/state"), `C:\Users\ana\AppData\Roaming\airlock`, `C:\Users\ana\AppData\Local\airlock`},
		{"windows UNC", "windows", map[string]string{"APPDATA": `\\fs\profiles\ana`, "LOCALAPPDATA": `\\fs\local\ana`}, `\\fs\profiles\ana\airlock`, `\\fs\local\ana\airlock`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := configDirFor(tt.goos, envOf(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			state, err := stateDirFor(tt.goos, envOf(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tt.wantCfg, tt.wantState}, []string{cfg, state}); diff != "" {
				t.Errorf("config, state (-want +got):\n%s", diff)
			}
		})
	}
	// Windows without its folders: an error naming the variable, never a guess.
	if _, err := stateDirFor("windows", envOf(map[string]string{"USERPROFILE": `C:\Users\ana`})); err == nil || err.Error() != "%LOCALAPPDATA% is not set to an absolute path" {
		t.Errorf("no LOCALAPPDATA: %v", err)
	}
	if _, err := configDirFor("windows", envOf(map[string]string{"APPDATA": `Roaming`})); err == nil {
		t.Error("relative APPDATA accepted")
	}
}

// Paths in the config: Windows forms are absolute on Windows, and only there.
func TestIsAbsFor(t *testing.T) {
	for _, tt := range []struct {
		p         string
		unix, win bool
	}{
		{"/var/lib/airlock", true, false},
		{`C:\Users\ana\airlock`, false, true},
		{`c:/Users/ana/airlock`, false, true},
		{`C:`, false, false},
		{`C:airlock`, false, false}, // relative to drive C's current folder
		{`\airlock`, false, false},  // relative to the current drive
		{`\\fs\share\airlock`, false, true},
		{`\\?\C:\airlock`, false, true},
		{`\\`, false, false},
		{`\\\x`, false, false},
		{`1:\x`, false, false},
		{`airlock`, false, false},
		{`~/airlock`, false, false},
		{`%LOCALAPPDATA%\airlock`, false, false}, // not expanded (docs/platforms.md)
		{"", false, false},
	} {
		if got := IsAbsFor("linux", tt.p); got != tt.unix {
			t.Errorf("IsAbsFor(linux, %q) = %v", tt.p, got)
		}
		if got := IsAbsFor("windows", tt.p); got != tt.win {
			t.Errorf("IsAbsFor(windows, %q) = %v", tt.p, got)
		}
	}
}

func TestJoinFor(t *testing.T) {
	for _, tt := range []struct {
		goos string
		in   []string
		want string
	}{
		{"linux", []string{"/a/", "b", "c"}, "/a/b/c"},
		{"windows", []string{`C:\a\`, `b`, `c`}, `C:\a\b\c`},
		{"windows", []string{`C:/a`, `Application Support`}, `C:\a\Application Support`},
		{"windows", []string{`\\fs\share`, `x`}, `\\fs\share\x`},
	} {
		if got := joinFor(tt.goos, tt.in...); got != tt.want {
			t.Errorf("joinFor(%s, %q) = %q, want %q", tt.goos, tt.in, got, tt.want)
		}
	}
}
