package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/importer"
	"github.com/airlock-mcp/airlock/session/oauth"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

const importUsageText = `usage: airlock import [FILE]

Prints airlock config TOML for the MCP servers in FILE: Claude Desktop's
claude_desktop_config.json, Claude Code's .mcp.json or ~/.claude.json, Cursor's
mcp.json, VS Code's mcp.json or settings.json, or Codex's config.toml (the format is
detected). Without FILE it reads the first of those clients' standard files that
lists servers (this folder's first, then yours) and says which. Every server is
untrusted; secrets become ${VAR} references, listed with what to export.
Save it with: airlock import [FILE] > %s
`

// importUsage is the usage text with this system's config path.
func importUsage() string { return fmt.Sprintf(importUsageText, defaultConfigHint()) }

// runImport prints the airlock TOML for another client's server list on stdout and
// a one-line summary on stderr.
func runImport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airlock import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, importUsage()) }
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	var r *importer.Result
	switch len(positional) {
	case 0:
		if r = discoverImport(importEnv(), stderr); r == nil {
			return 1
		}
	case 1:
		if r, err = importer.ReadFile(positional[0]); err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 1
		}
	default:
		fmt.Fprint(stderr, importUsage())
		return 2
	}
	// The output must be a config airlock loads once its variables are set.
	if _, err := config.Parse(r.TOML, "imported", func(string) (string, bool) { return "/set", true }); err != nil {
		fmt.Fprintf(stderr, "airlock: the imported config does not load, which is a bug in airlock import: %v\n", err)
		return 1
	}
	if _, err := stdout.Write(r.TOML); err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "airlock: %s\n", r.Summary())
	return 0
}

// importEnv is where `airlock import` looks for other clients' files on this system.
func importEnv() importer.Env {
	home, _ := config.HomeFor(runtime.GOOS, os.LookupEnv)
	cwd, _ := os.Getwd()
	return importer.Env{GOOS: runtime.GOOS, Home: home, Cwd: cwd, Lookup: os.LookupEnv}
}

// discoverImport imports the first standard client file that lists servers and says
// on stderr which it read and what else it found; with none it lists where it
// looked and returns nil.
func discoverImport(env importer.Env, stderr io.Writer) *importer.Result {
	locs := importer.Locations(env)
	r, at, found, err := importer.Discover(locs)
	where := func(l importer.Location) string {
		s := l.Client
		if l.Project {
			s += " (this folder)"
		}
		return s + " " + safetext.Inline(l.Path)
	}
	for _, f := range found {
		switch {
		case f.Err != nil:
			fmt.Fprintf(stderr, "airlock: skipped %s: %s\n", where(f.Location), safetext.Inline(f.Err.Error()))
		case r != nil:
			n := fmt.Sprintf("%d servers", f.Servers)
			if f.Servers == 1 {
				n = "1 server"
			}
			fmt.Fprintf(stderr, "airlock: also found %s (%s): import it with airlock import FILE\n", where(f.Location), n)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v; looked for:\n", err)
		for _, l := range locs {
			fmt.Fprintf(stderr, "  %s\n", where(l))
		}
		fmt.Fprintln(stderr, "Name a file with: airlock import FILE")
		return nil
	}
	fmt.Fprintf(stderr, "airlock: read %s\n", where(at))
	return r
}

// loadSessionConfig reads --config, or with --from converts another client's server
// list in memory: its secrets are used where they were, never written anywhere, and
// nothing is written next to it (the config has no Path).
func loadSessionConfig(cfgPath, fromPath string) (*config.Config, error) {
	if fromPath == "" {
		return loadConfig(cfgPath)
	}
	if cfgPath != "" {
		return nil, errors.New("--config and --from cannot be used together")
	}
	r, err := importer.ReadFile(fromPath)
	if err != nil {
		return nil, err
	}
	cfg, err := r.Config(os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("%w\n(`airlock import %s` shows the imported config and the variables to export)", err, fromPath)
	}
	return withPolicy(cfg)
}

// sessionTitle names what the session runs on.
func sessionTitle(cfg *config.Config, fromPath string) string {
	if fromPath != "" {
		return fromPath + " (imported)"
	}
	return cfg.Path
}

// showAuthorization prints the authorization URL of a server that wants OAuth on
// stderr, for the commands without a TUI (the browser is opened too). The URL is
// built from the authorization server's metadata, so it is escaped like any text a
// server controls.
func showAuthorization(stderr io.Writer) oauth.Options {
	return oauth.Options{Show: func(server, url string) {
		fmt.Fprintf(stderr, "airlock: %s wants you to authorize airlock in your browser; if it did not open, open:\n  %s\n", safetext.Inline(server), safetext.Inline(url))
	}}
}
