package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/airlock-mcp/airlock/internal/tomlw"
)

// rawServer is one server entry of a source file, in the file's order.
type rawServer struct {
	name string
	v    any // a JSON or TOML value; a map[string]any when well formed
}

// source is a parsed source file.
type source struct {
	format  Format
	servers []rawServer
	inputs  []any // VS Code "inputs"
	notes   []string
}

// parse detects the format of data (named name) and lists its servers in order.
func parse(data []byte, name string) (*source, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	base := filepath.Base(name)
	if strings.EqualFold(filepath.Ext(base), ".toml") {
		return parseCodex(data)
	}
	clean := stripJSONC(data)
	if !json.Valid(clean) {
		// Not JSON: a Codex config under another name?
		if src, err := parseCodex(data); err == nil {
			return src, nil
		}
		return nil, jsonError(clean, json.Unmarshal(clean, new(any)))
	}
	top, err := objectEntries(clean)
	if err != nil {
		return nil, fmt.Errorf("want a JSON object at the top: %w", err)
	}
	get := func(entries []entry, key string) (json.RawMessage, bool) {
		for i := len(entries) - 1; i >= 0; i-- { // the last one wins, as in JSON.parse
			if entries[i].key == key {
				return entries[i].value, true
			}
		}
		return nil, false
	}
	src := &source{}
	var servers json.RawMessage
	if s, ok := get(top, "mcpServers"); ok {
		servers = s
		dir := filepath.Base(filepath.Dir(name))
		switch {
		case strings.EqualFold(base, "claude_desktop_config.json"):
			src.format = ClaudeDesktop
		case base == ".mcp.json" || base == ".claude.json":
			src.format = ClaudeCode
		case dir == ".cursor":
			src.format = Cursor
		default:
			src.format = MCPServers
		}
		if _, ok := get(top, "projects"); ok {
			src.notes = append(src.notes, "servers configured per project (projects.*.mcpServers) were not imported: import that project's .mcp.json")
		}
	} else {
		vs := top
		if m, ok := get(top, "mcp"); ok { // VS Code user settings.json
			if vs, err = objectEntries(m); err != nil {
				return nil, fmt.Errorf("mcp: want an object: %w", err)
			}
		}
		s, ok := get(vs, "servers")
		if !ok {
			return nil, errors.New("no MCP servers found: want mcpServers (Claude Desktop, Claude Code, Cursor), servers (VS Code) or [mcp_servers] (Codex)")
		}
		servers = s
		src.format = VSCode
		if in, ok := get(vs, "inputs"); ok {
			if err := json.Unmarshal(in, &src.inputs); err != nil {
				return nil, errors.New("inputs: want an array")
			}
		}
	}
	if bytes.Equal(bytes.TrimSpace(servers), []byte("null")) {
		return src, nil
	}
	list, err := objectEntries(servers)
	if err != nil {
		return nil, fmt.Errorf("%s: want an object of servers: %w", src.format.serversKey(), err)
	}
	seen := map[string]int{}
	for _, e := range list {
		var v any
		_ = json.Unmarshal(e.value, &v) // valid: it came out of a valid document
		if i, dup := seen[e.key]; dup {
			src.servers[i].v = v
			src.notes = append(src.notes, fmt.Sprintf("server %s is defined more than once: the last definition was imported", tomlw.Printable.Quote(e.key)))
			continue
		}
		seen[e.key] = len(src.servers)
		src.servers = append(src.servers, rawServer{name: e.key, v: v})
	}
	return src, nil
}

// parseCodex reads a Codex config.toml: [mcp_servers.NAME] tables.
func parseCodex(data []byte) (*source, error) {
	var doc map[string]any
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("line %d: %s", pe.Position.Line, pe.Message)
		}
		return nil, err
	}
	servers, ok := doc["mcp_servers"]
	if !ok {
		return nil, errors.New("no MCP servers found: want [mcp_servers.NAME] tables (Codex)")
	}
	m, ok := servers.(map[string]any)
	if !ok {
		return nil, errors.New("mcp_servers: want a table")
	}
	src := &source{format: Codex}
	for _, k := range md.Keys() { // document order
		if len(k) == 2 && k[0] == "mcp_servers" {
			if v, ok := m[k[1]]; ok {
				src.servers = append(src.servers, rawServer{name: k[1], v: v})
				delete(m, k[1])
			}
		}
	}
	if _, ok := doc["profiles"]; ok {
		src.notes = append(src.notes, "servers configured in profiles were not imported")
	}
	return src, nil
}

// entry is one member of a JSON object, in document order.
type entry struct {
	key   string
	value json.RawMessage
}

// objectEntries lists the members of the JSON object in data in document order
// (encoding/json's maps lose it, and a server list reads best in the order it was
// written).
func objectEntries(data []byte) ([]entry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("got %s", jsonKind(tok))
	}
	var out []entry
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, entry{key: key, value: v})
	}
	return out, nil
}

func jsonKind(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "an array"
		}
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "something else"
}

// jsonError reports a JSON syntax error with its line and column.
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := 1, 1
		for _, c := range data[:min(int(se.Offset), len(data))] {
			if c == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		return fmt.Errorf("not JSON (line %d, column %d: %s) nor a Codex config.toml", line, col, se.Error())
	}
	return fmt.Errorf("not JSON nor a Codex config.toml: %w", err)
}

// stripJSONC turns JSON with comments and trailing commas (VS Code's and Cursor's
// files allow both) into JSON, keeping every newline so positions still match.
func stripJSONC(data []byte) []byte {
	out := make([]byte, 0, len(data))
	inStr, esc := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inStr:
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
			out = append(out, c)
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			if i < len(data) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			i += 2
			for i < len(data) && !(data[i] == '*' && i+1 < len(data) && data[i+1] == '/') {
				if data[i] == '\n' {
					out = append(out, '\n')
				}
				i++
			}
			i++ // the closing '/'
			out = append(out, ' ')
		default:
			out = append(out, c)
		}
	}
	// Trailing commas: a ',' whose next significant byte closes an object or array.
	inStr, esc = false, false
	for i, c := range out {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == ',':
			j := i + 1
			for j < len(out) && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
				j++
			}
			if j < len(out) && (out[j] == '}' || out[j] == ']') {
				out[i] = ' '
			}
		}
	}
	return out
}
