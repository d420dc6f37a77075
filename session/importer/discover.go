package importer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/airlock-mcp/airlock/session/config"
)

// Location is a file where a client keeps a list of MCP servers.
type Location struct {
	// Client names the client ("Claude Desktop").
	Client string
	// Project is true for a file in the current folder (the project's servers),
	// false for the user's own.
	Project bool
	// Path is the file.
	Path string
}

// Env is what Locations needs to know of the system, injected so that every
// platform's table can be tested on any.
type Env struct {
	// GOOS is runtime.GOOS: "linux", "darwin", "windows", …
	GOOS string
	// Home is the user's home folder; Cwd the current folder ("" leaves project
	// files out).
	Home, Cwd string
	// Lookup reads an environment variable (os.LookupEnv).
	Lookup func(string) (string, bool)
}

// Locations lists where the clients airlock imports from keep their servers on
// env.GOOS, in the order `airlock import` tries them: the project's files in the
// current folder first (Claude Code's .mcp.json, Cursor's and VS Code's), then the
// user's (Claude Desktop, Claude Code, Cursor, VS Code, Codex). It only computes
// paths; it reads nothing.
func Locations(env Env) []Location {
	goos := env.GOOS
	join := func(elem ...string) string { return config.JoinFor(goos, elem...) }
	lookup := func(name string) string {
		if env.Lookup == nil {
			return ""
		}
		if v, ok := env.Lookup(name); ok && config.IsAbsFor(goos, v) {
			return v
		}
		return ""
	}
	// appData is where Electron apps (Claude Desktop, VS Code) keep their settings:
	// app.getPath("appData").
	var appData string
	switch goos {
	case "windows":
		if appData = lookup("APPDATA"); appData == "" {
			appData = join(env.Home, "AppData", "Roaming")
		}
	case "darwin":
		appData = join(env.Home, "Library", "Application Support")
	default:
		if appData = lookup("XDG_CONFIG_HOME"); appData == "" {
			appData = join(env.Home, ".config")
		}
	}
	codexHome := lookup("CODEX_HOME")
	if codexHome == "" {
		codexHome = join(env.Home, ".codex")
	}

	var out []Location
	if env.Cwd != "" {
		out = append(out,
			Location{"Claude Code", true, join(env.Cwd, ".mcp.json")},
			Location{"Cursor", true, join(env.Cwd, ".cursor", "mcp.json")},
			Location{"VS Code", true, join(env.Cwd, ".vscode", "mcp.json")},
		)
	}
	if env.Home == "" {
		return out
	}
	return append(out,
		Location{"Claude Desktop", false, join(appData, "Claude", "claude_desktop_config.json")},
		Location{"Claude Code", false, join(env.Home, ".claude.json")},
		Location{"Cursor", false, join(env.Home, ".cursor", "mcp.json")},
		Location{"VS Code", false, join(appData, "Code", "User", "mcp.json")},
		Location{"VS Code", false, join(appData, "Code", "User", "settings.json")},
		Location{"Codex", false, join(codexHome, "config.toml")},
	)
}

// Found is a location that exists and was not imported.
type Found struct {
	Location
	// Servers is how many servers it lists, when it could be read.
	Servers int
	// Err says why it could not be used: unreadable, not a server list, no servers.
	Err error
}

// ErrNoneFound is returned (wrapped) by Discover when no location holds servers.
var ErrNoneFound = errors.New("no MCP server list found")

// Discover imports the first of locs that holds at least one server. It returns that
// result and location, and every other location that exists with its number of
// servers or why it could not be used, so the person knows what else there is. With
// none it returns an error wrapping ErrNoneFound.
func Discover(locs []Location) (*Result, Location, []Found, error) {
	var (
		chosen *Result
		at     Location
		others []Found
	)
	for _, l := range locs {
		fi, err := os.Stat(l.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil && !fi.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
		if err != nil {
			others = append(others, Found{Location: l, Err: err})
			continue
		}
		r, err := ReadFile(l.Path)
		switch {
		case err != nil:
			others = append(others, Found{Location: l, Err: err})
		case len(r.Servers) == 0:
			others = append(others, Found{Location: l, Err: errors.New("it lists no servers")})
		case chosen == nil:
			chosen, at = r, l
		default:
			others = append(others, Found{Location: l, Servers: len(r.Servers)})
		}
	}
	if chosen == nil {
		return nil, Location{}, others, fmt.Errorf("%w", ErrNoneFound)
	}
	return chosen, at, others, nil
}
