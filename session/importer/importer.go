// Package importer turns the MCP server lists of other clients into airlock config
// TOML: Claude Desktop's claude_desktop_config.json, Claude Code's .mcp.json, Cursor's
// mcp.json (all "mcpServers"), VS Code's .vscode/mcp.json ("servers" and "inputs") and
// Codex's config.toml ([mcp_servers.NAME]).
//
// What it promises: every imported server is untrusted; a secret in the source (an
// env or header value that looks like a credential, or sits under a key named like
// one) is never written out, only a ${VAR} reference to it with a note saying what to
// export; server names are made valid airlock names, with a note when one changes.
// It reads the file it is given (or, with Discover, the clients' standard files that
// Locations lists for a platform) and nothing else: it never connects, never runs a
// command, and never reads the environment (Result.Config and Locations take a
// lookup function).
package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/airlock-mcp/airlock/session/config"
)

// Format is the kind of file a server list was imported from.
type Format string

// The formats.
const (
	ClaudeDesktop Format = "claude-desktop" // claude_desktop_config.json, "mcpServers"
	ClaudeCode    Format = "claude-code"    // .mcp.json or ~/.claude.json, "mcpServers"
	Cursor        Format = "cursor"         // .cursor/mcp.json, "mcpServers"
	MCPServers    Format = "mcpservers"     // another file with "mcpServers"
	VSCode        Format = "vscode"         // .vscode/mcp.json, "servers" and "inputs"
	Codex         Format = "codex"          // config.toml, [mcp_servers.NAME]
)

// String names the format for people ("Claude Desktop").
func (f Format) String() string {
	switch f {
	case ClaudeDesktop:
		return "Claude Desktop"
	case ClaudeCode:
		return "Claude Code"
	case Cursor:
		return "Cursor"
	case MCPServers:
		return "an mcpServers file (Claude Desktop, Claude Code or Cursor)"
	case VSCode:
		return "VS Code"
	case Codex:
		return "Codex"
	}
	return string(f)
}

func (f Format) serversKey() string {
	switch f {
	case VSCode:
		return "servers"
	case Codex:
		return "mcp_servers"
	}
	return "mcpServers"
}

// Options says where a source file lives, for what its references mean.
type Options struct {
	// Name is the source file's path: its base name picks the format
	// (claude_desktop_config.json, .mcp.json, .cursor/mcp.json, *.toml) and it is
	// named in the output's first comment.
	Name string
	// WorkspaceFolder is what VS Code's ${workspaceFolder} stands for; "" leaves
	// the reference to be exported as a variable.
	WorkspaceFolder string
	// Home is what VS Code's ${userHome} stands for; "" leaves the reference to be
	// exported as a variable.
	Home string
}

// Result is a converted server list.
type Result struct {
	// Format is the detected format of the source.
	Format Format
	// Source is Options.Name.
	Source string
	// Servers lists the source's servers in the source's order, imported or not.
	Servers []Server
	// Vars lists the environment variables the TOML reads, sorted by name.
	Vars []Var
	// Notes are remarks on the whole file (what was left out and why).
	Notes []string
	// TOML is the airlock config: a [servers.NAME] table per imported server with
	// comments. It holds no secret from the source.
	TOML []byte

	secrets *vault      // variable -> value taken out of the source; never printed
	expand  []expansion // ${VAR} written where airlock does not expand variables
}

// Server is one server of the source file.
type Server struct {
	// Name is the server's airlock name (^[a-z0-9][a-z0-9-]{0,31}$); "" when skipped.
	Name string
	// Source is the server's name in the source file.
	Source string
	// Skipped says why the server was not imported; "" when it was.
	Skipped string
	// Transport, Command, Args, Cwd, Env, URL and Headers are as written in the
	// TOML: secrets are ${VAR} references.
	Transport config.Transport
	Command   string
	Args      []string
	Cwd       string
	Env       map[string]string
	URL       string
	Headers   map[string]string
	// ConnectTimeout and CallTimeout are the source's timeouts, zero when it had none.
	ConnectTimeout, CallTimeout time.Duration
	// DeniedTools are tools the source disabled; they are imported with policy deny.
	DeniedTools []string
	// OAuth is true for an http server without an Authorization header: it gets an
	// empty [servers.NAME.oauth] table, so airlock authorizes with OAuth if the
	// server asks, as the clients it came from do.
	OAuth bool
	// Notes are remarks on this server, written as comments above its table.
	Notes []string

	argNotes    map[int]string
	envNotes    map[string]string
	headerNotes map[string]string
	urlNote     string
	commandNote string
	cwdNote     string
}

// Var is an environment variable the imported config reads.
type Var struct {
	// Name is the variable, as in ${Name}.
	Name string
	// Secret is true when its value was taken out of the source file, false when the
	// source itself read it from the environment or asked the person for it.
	Secret bool
	// Where lists the key paths that read it (servers.web.headers.Authorization).
	Where []string
	// About says where the value comes from when that is not the source file:
	// a VS Code input's description, say.
	About string
}

// ReadFile reads and converts the file at path. VS Code's ${workspaceFolder} is the
// folder holding .vscode, and ${userHome} the home directory.
func ReadFile(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	opts := Options{Name: path}
	if abs, err := filepath.Abs(path); err == nil {
		if dir := filepath.Dir(abs); filepath.Base(dir) == ".vscode" {
			opts.WorkspaceFolder = filepath.Dir(dir)
		}
	}
	opts.Home, _ = os.UserHomeDir()
	return Convert(data, opts)
}

// Convert converts the contents of a source file. An error means the file as a whole
// could not be read (not JSON nor TOML, no server list); a server that cannot be
// imported is listed with Skipped set and commented in the TOML.
func Convert(data []byte, opts Options) (*Result, error) {
	src, err := parse(data, opts.Name)
	if err != nil {
		return nil, fmt.Errorf("importing %s: %w", displayName(opts.Name), err)
	}
	c := newConverter(src, opts)
	c.run()
	r := &Result{
		Format:  src.format,
		Source:  opts.Name,
		Servers: c.servers,
		Vars:    c.varList(),
		Notes:   append(src.notes, c.notes...),
		secrets: c.secrets,
		expand:  c.expand,
	}
	r.TOML = r.render()
	return r, nil
}

func displayName(name string) string {
	if name == "" {
		return "the file"
	}
	return name
}
