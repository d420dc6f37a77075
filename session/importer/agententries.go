package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/airlock-mcp/airlock/session/config"
)

// AgentEntry is one server entry of an agent CLI's config that points at airlock:
// its gateway's URL or a command that runs `airlock bridge`.
type AgentEntry struct {
	// Agent is "claude", "codex" or "gemini" (as `airlock gateway snippet` names them).
	Agent string
	// File is the config file, Name the entry's name in it.
	File, Name string
	// Bridge is true for a stdio entry that runs `airlock bridge`.
	Bridge bool
	// Timeout is the entry's own tool-call timeout; 0 when it sets none (or one the
	// agent ignores). Key is the setting that holds it, as the agent spells it.
	Timeout time.Duration
	Key     string
}

// AgentMatch says which entries are airlock's: Addrs are the host:port pairs the
// gateway listens on (the config's, the running one's), Self the airlock
// executable.
type AgentMatch struct {
	Addrs []string
	Self  string
}

// AgentEntries reads the configs of the agent CLIs that register MCP servers in a
// file airlock can read (Claude Code, Codex CLI, Gemini CLI), at the places and
// under the environment overrides each agent itself uses, and returns the entries
// that point at airlock. A file that does not exist is no problem; one that cannot
// be read or parsed is, and is said in problems (never an error: it only means
// these entries are not known).
func AgentEntries(env Env, match AgentMatch) (entries []AgentEntry, problems []string) {
	for _, f := range agentFiles(env) {
		data, err := readAgentFile(f.path, !f.project)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		var found []AgentEntry
		if err == nil {
			found, err = f.parse(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), match)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: cannot read %s: %v", agentNames[f.agent], f.path, err))
			continue
		}
		for i := range found {
			found[i].Agent, found[i].File = f.agent, f.path
		}
		entries = append(entries, found...)
	}
	return entries, problems
}

// readAgentFile reads a regular file of at most maxAgentFile bytes. It opens first
// and asks the open file what it is, so what is read is what was checked: anything
// else (a FIFO in a cloned project, which would hold check forever; a directory) is
// refused unread. Unless follow, a link at path is refused too: a project's file
// is the project's, and a cloned repo's .codex/config.toml linked to
// ~/.aws/credentials must not have check read the credentials. The user's own
// files may be links (dotfile managers make them).
func readAgentFile(path string, follow bool) ([]byte, error) {
	f, err := openAgentFile(path, follow)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if fi.Size() > maxAgentFile {
		return nil, fmt.Errorf("over %d MiB", maxAgentFile>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxAgentFile+1))
	if err == nil && len(data) > maxAgentFile {
		err = fmt.Errorf("over %d MiB", maxAgentFile>>20)
	}
	return data, err
}

// errLink is a project's agent config that is a link.
var errLink = errors.New("a link, not read (a project's agent config must be a file of its own)")

// maxAgentFile bounds an agent config airlock reads (Claude Code's ~/.claude.json
// holds its history of projects and grows).
const maxAgentFile = 64 << 20

var agentNames = map[string]string{"claude": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI"}

type agentFile struct {
	agent, path string
	// project is a file of the current folder's project, not the user's.
	project bool
	parse   func([]byte, AgentMatch) ([]AgentEntry, error)
}

// agentFiles are the files, in the order they are read:
//   - Claude Code: $CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json (its
//     mcpServers, and those of the project in the current folder), and the
//     project's .mcp.json;
//   - Codex CLI: $CODEX_HOME/config.toml, else ~/.codex/config.toml, and the
//     project's .codex/config.toml ([mcp_servers.NAME]);
//   - Gemini CLI: $GEMINI_CLI_HOME/.gemini/settings.json, else
//     ~/.gemini/settings.json, and the project's .gemini/settings.json (mcpServers).
func agentFiles(env Env) []agentFile {
	join := func(elem ...string) string { return config.JoinFor(env.GOOS, elem...) }
	lookup := func(name string) string {
		if env.Lookup == nil {
			return ""
		}
		if v, ok := env.Lookup(name); ok && config.IsAbsFor(env.GOOS, v) {
			return v
		}
		return ""
	}
	var out []agentFile
	claudeDir, codexHome, geminiHome := lookup("CLAUDE_CONFIG_DIR"), lookup("CODEX_HOME"), lookup("GEMINI_CLI_HOME")
	if claudeDir == "" && env.Home != "" {
		claudeDir = env.Home
	}
	if codexHome == "" && env.Home != "" {
		codexHome = join(env.Home, ".codex")
	}
	if geminiHome == "" {
		geminiHome = env.Home
	}
	if claudeDir != "" {
		out = append(out, agentFile{"claude", join(claudeDir, ".claude.json"), false, func(b []byte, m AgentMatch) ([]AgentEntry, error) {
			return parseClaudeUser(b, m, env.Cwd)
		}})
	}
	if env.Cwd != "" {
		out = append(out, agentFile{"claude", join(env.Cwd, ".mcp.json"), true, parseClaudeProject})
	}
	if codexHome != "" {
		out = append(out, agentFile{"codex", join(codexHome, "config.toml"), false, parseCodexEntries})
	}
	if env.Cwd != "" {
		out = append(out, agentFile{"codex", join(env.Cwd, ".codex", "config.toml"), true, parseCodexEntries})
	}
	if geminiHome != "" {
		out = append(out, agentFile{"gemini", join(geminiHome, ".gemini", "settings.json"), false, parseGeminiEntries})
	}
	if env.Cwd != "" {
		out = append(out, agentFile{"gemini", join(env.Cwd, ".gemini", "settings.json"), true, parseGeminiEntries})
	}
	// Run in the home folder, a project's file is the user's: read once.
	seen := map[string]bool{}
	kept := out[:0]
	for _, f := range out {
		if !seen[f.path] {
			seen[f.path] = true
			kept = append(kept, f)
		}
	}
	return kept
}

// jsonServer is a server entry of a JSON agent config, with the fields that say
// where it points and how long a call may take.
type jsonServer struct {
	URL     string          `json:"url"`
	HTTPURL string          `json:"httpUrl"` // Gemini CLI's streamable HTTP
	Command string          `json:"command"`
	Args    []string        `json:"args"`
	Timeout json.RawMessage `json:"timeout"`
}

func decodeJSON(b []byte, v any) error {
	clean := stripJSONC(b)
	if err := json.Unmarshal(clean, v); err != nil {
		return agentJSONError(clean, err)
	}
	return nil
}

// agentJSONError and agentTOMLError say where a file does not parse and nothing
// of what it holds: the decoders' messages quote the text (`found "wJalrXUtnFEMI"`,
// `last key "aws_secret_access_key"`), and check's warnings go to CI logs, SARIF
// and annotations. A file that is not the agent's at all (a link to a secret) must
// not have its pieces published.
func agentJSONError(data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := lineCol(data, se.Offset)
		return positionError("not valid JSON", line, col)
	case errors.As(err, &te):
		line, col := lineCol(data, te.Offset)
		return positionError("not the agent's settings (a value of the wrong type)", line, col)
	}
	return errors.New("not valid JSON")
}

func agentTOMLError(err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) && pe.Position.Line > 0 {
		return positionError("not valid TOML", pe.Position.Line, max(pe.Position.Col, 1))
	}
	return errors.New("not valid TOML")
}

func positionError(what string, line, col int) error {
	return fmt.Errorf("%s at line %d, column %d", what, line, col)
}

// lineCol turns a byte offset (the decoder's: just past the offending byte) into
// a 1-based line and column.
func lineCol(data []byte, off int64) (line, col int) {
	line, col = 1, 1
	for _, c := range data[:min(max(int(off)-1, 0), len(data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// jsonServers decodes an mcpServers object leniently: an entry of another shape is
// not airlock's and is skipped, not a reason to give up on the file.
func jsonServers(raw map[string]json.RawMessage, m AgentMatch, key string, unit time.Duration, min time.Duration) []AgentEntry {
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []AgentEntry
	for _, n := range names {
		var s jsonServer
		if json.Unmarshal(raw[n], &s) != nil {
			continue
		}
		u := s.URL
		if u == "" {
			u = s.HTTPURL
		}
		bridge := m.isBridge(s.Command, s.Args)
		if !bridge && !m.isGateway(u) {
			continue
		}
		e := AgentEntry{Name: n, Bridge: bridge, Key: key}
		var ms float64
		if len(s.Timeout) > 0 && json.Unmarshal(s.Timeout, &ms) == nil && ms > 0 && !math.IsInf(ms, 0) {
			if d := time.Duration(math.Min(ms, float64(math.MaxInt64/unit))) * unit; d >= min {
				e.Timeout = d
			}
		}
		out = append(out, e)
	}
	return out
}

// parseClaudeUser reads ~/.claude.json: the user's mcpServers and those of the
// project at cwd (Claude Code's "local" scope).
func parseClaudeUser(b []byte, m AgentMatch, cwd string) ([]AgentEntry, error) {
	var top struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Projects   map[string]struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
	}
	if err := decodeJSON(b, &top); err != nil {
		return nil, err
	}
	// Claude Code ignores a per-server timeout below one second.
	out := jsonServers(top.MCPServers, m, `"timeout"`, time.Millisecond, time.Second)
	if p, ok := top.Projects[cwd]; ok && cwd != "" {
		local := jsonServers(p.MCPServers, m, `"timeout"`, time.Millisecond, time.Second)
		for i := range local {
			local[i].Name = "projects." + cwd + "." + local[i].Name
		}
		out = append(out, local...)
	}
	return out, nil
}

func parseClaudeProject(b []byte, m AgentMatch) ([]AgentEntry, error) {
	return timeoutMSServers(b, m, time.Second)
}

func parseGeminiEntries(b []byte, m AgentMatch) ([]AgentEntry, error) {
	return timeoutMSServers(b, m, time.Millisecond)
}

// timeoutMSServers reads the mcpServers object of a JSON file whose entries give
// "timeout" in milliseconds; the agent ignores one below min (Claude Code: a
// second).
func timeoutMSServers(b []byte, m AgentMatch, min time.Duration) ([]AgentEntry, error) {
	var top struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := decodeJSON(b, &top); err != nil {
		return nil, err
	}
	return jsonServers(top.MCPServers, m, `"timeout"`, time.Millisecond, min), nil
}

func parseCodexEntries(b []byte, m AgentMatch) ([]AgentEntry, error) {
	var top struct {
		MCPServers map[string]map[string]any `toml:"mcp_servers"`
	}
	if _, err := toml.Decode(string(b), &top); err != nil {
		return nil, agentTOMLError(err)
	}
	names := make([]string, 0, len(top.MCPServers))
	for n := range top.MCPServers {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []AgentEntry
	for _, n := range names {
		s := top.MCPServers[n]
		u, _ := s["url"].(string)
		cmd, _ := s["command"].(string)
		var args []string
		if list, ok := s["args"].([]any); ok {
			for _, a := range list {
				if str, ok := a.(string); ok {
					args = append(args, str)
				}
			}
		}
		bridge := m.isBridge(cmd, args)
		if !bridge && !m.isGateway(u) {
			continue
		}
		e := AgentEntry{Name: n, Bridge: bridge, Key: "tool_timeout_sec"}
		var sec float64
		switch v := s["tool_timeout_sec"].(type) {
		case int64:
			sec = float64(v)
		case float64:
			sec = v
		}
		if sec > 0 && !math.IsInf(sec, 0) {
			e.Timeout = time.Duration(math.Min(sec, float64(math.MaxInt64/time.Second)) * float64(time.Second))
		}
		out = append(out, e)
	}
	return out, nil
}

// isGateway reports whether u is the gateway's endpoint: http://HOST:PORT/mcp with
// HOST:PORT one of the gateway's addresses, a loopback name standing for a loopback
// address of the same port.
func (m AgentMatch) isGateway(u string) bool {
	pu, err := url.Parse(u)
	if err != nil || u == "" || pu.Scheme != "http" || strings.TrimSuffix(pu.Path, "/") != "/mcp" {
		return false
	}
	host, port := pu.Hostname(), pu.Port()
	for _, a := range m.Addrs {
		ah, ap, err := net.SplitHostPort(a)
		if err != nil || ap != port {
			continue
		}
		if strings.EqualFold(ah, host) || loopbackHost(ah) && loopbackHost(host) {
			return true
		}
	}
	return false
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// isBridge reports whether command args runs `airlock bridge`: the command is this
// airlock executable or one named airlock, and its first argument is bridge.
func (m AgentMatch) isBridge(command string, args []string) bool {
	if command == "" || len(args) == 0 || args[0] != "bridge" {
		return false
	}
	if m.Self != "" && command == m.Self {
		return true
	}
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(command, `\`, "/")))
	return base == "airlock" || base == "airlock.exe"
}
