package config

import (
	"os"

	"github.com/BurntSushi/toml"
)

// Locations maps a config file's servers and tool tables to the lines that define
// them, for reports that point at the config (SARIF, GitHub annotations).
type Locations struct {
	// File is the config file's path as given.
	File  string
	lines map[string]int
}

// Locate reads path and finds the line of every key in it. A config built in code
// (path "") has no lines.
func Locate(path string) (*Locations, error) {
	l := &Locations{File: path, lines: map[string]int{}}
	if path == "" {
		return l, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l.lines = keyLines(string(b))
	return l, nil
}

// LocateSource finds the lines of src, read from file.
func LocateSource(file string, src []byte) *Locations {
	return &Locations{File: file, lines: keyLines(string(src))}
}

// Server is the line of [servers.NAME] (0 when the file does not name it).
func (l *Locations) Server(name string) int {
	if l == nil {
		return 0
	}
	return l.lines[toml.Key{"servers", name}.String()]
}

// Rule is the line of the rule of key path name (servers.fs.tools.read_file.rules[0],
// as trust.Rule.Name has it), else of its tool (0 when none of them).
func (l *Locations) Rule(server, tool, name string) int {
	if l == nil {
		return 0
	}
	if n := l.lines[name]; n > 0 && name != "" {
		return n
	}
	return l.Tool(server, tool)
}

// Tool is the line of [servers.NAME.tools.TOOL], else of the server (0 when neither).
func (l *Locations) Tool(server, tool string) int {
	if l == nil {
		return 0
	}
	if n := l.lines[toml.Key{"servers", server, "tools", tool}.String()]; n > 0 {
		return n
	}
	return l.Server(server)
}

// Key is the line of the key at path (policy, approval_timeout), else of its
// nearest table the file has (0 when none).
func (l *Locations) Key(path ...string) int {
	if l == nil {
		return 0
	}
	for n := len(path); n > 0; n-- {
		if line := l.lines[toml.Key(path[:n]).String()]; line > 0 {
			return line
		}
	}
	return 0
}
