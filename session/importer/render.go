package importer

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airlock-mcp/airlock/internal/tomlw"
)

// render writes the config. Every string that came from the source is quoted, in
// values and in comments alike.
func (r *Result) render() []byte {
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	name := filepath.Base(r.Source)
	if name == "." || name == "" {
		name = "the source"
	} else {
		name = tomlw.Printable.Quote(name)
	}
	w("# airlock servers imported from %s (%s) by `airlock import`.\n", name, r.Format)
	w("# Every server starts untrusted: airlock believes none of its tool annotations\n")
	w("# until you set trust = \"trusted\". Read each command before you run it.\n")

	var secret, other []Var
	for _, v := range r.Vars {
		if v.Secret {
			secret = append(secret, v)
		} else {
			other = append(other, v)
		}
	}
	width := 0
	for _, v := range r.Vars {
		width = max(width, len(v.Name))
	}
	varLine := func(v Var) {
		about := strings.Join(v.Where, ", ")
		if v.About != "" {
			about = v.About + "; " + about
		}
		w("#   export %-*s  # %s\n", width+4, v.Name+"=...", about)
	}
	if len(secret) > 0 {
		w("#\n# Secrets were not copied. Export these variables before running airlock\n")
		w("# (`airlock --from FILE` takes them from the source file itself):\n")
		for _, v := range secret {
			varLine(v)
		}
	}
	if len(other) > 0 {
		w("#\n# The source reads these from the environment (or asks for them); export them too:\n")
		for _, v := range other {
			varLine(v)
		}
	}
	for _, n := range r.Notes {
		w("#\n# Note: %s\n", n)
	}
	imported := 0
	for _, s := range r.Servers {
		if s.Skipped == "" {
			imported++
		}
	}
	if imported == 0 {
		w("#\n# No server could be imported.\n")
	}

	for _, s := range r.Servers {
		w("\n")
		if s.Skipped != "" {
			w("# Not imported: %s: %s.\n", tomlw.Printable.Quote(s.Source), s.Skipped)
			continue
		}
		for _, n := range s.Notes {
			w("# %s\n", n)
		}
		w("%s\n", tomlw.Printable.Table("servers", s.Name))
		field := func(key, value, note string) {
			line := key + " = " + value
			if note != "" {
				line += "   # " + note
			}
			w("%s\n", line)
		}
		if s.Command != "" {
			field("command", tomlw.Printable.Quote(s.Command), s.commandNote)
		}
		if len(s.Args) > 0 {
			if len(s.argNotes) == 0 {
				field("args", tomlw.Printable.Array(s.Args), "")
			} else {
				w("args = [\n")
				for i, a := range s.Args {
					line := "  " + tomlw.Printable.Quote(a) + ","
					if n := s.argNotes[i]; n != "" {
						line += "   # " + n
					}
					w("%s\n", line)
				}
				w("]\n")
			}
		}
		if s.Cwd != "" {
			field("cwd", tomlw.Printable.Quote(s.Cwd), s.cwdNote)
		}
		if s.URL != "" {
			field("url", tomlw.Printable.Quote(s.URL), s.urlNote)
		}
		if s.Transport == "sse" {
			field("transport", `"sse"`, "")
		}
		if s.ConnectTimeout > 0 {
			field("connect_timeout", tomlw.Printable.Quote(s.ConnectTimeout.String()), "")
		}
		if s.CallTimeout > 0 {
			field("call_timeout", tomlw.Printable.Quote(s.CallTimeout.String()), "")
		}
		field("trust", `"untrusted"`, "")
		table := func(name string, m, notes map[string]string) {
			if len(m) == 0 {
				return
			}
			w("\n%s\n", tomlw.Printable.Table("servers", s.Name, name))
			for _, k := range slices.Sorted(maps.Keys(m)) {
				field(tomlw.Printable.Key(k), tomlw.Printable.Quote(m[k]), notes[k])
			}
		}
		table("env", s.Env, s.envNotes)
		table("headers", s.Headers, s.headerNotes)
		if s.OAuth {
			w("\n# OAuth if the server asks for it (a browser opens once; tokens are kept in the\n")
			w("# state dir). Keys: client_id, client_secret, scopes, redirect_port; see config.example.toml.\n")
			w("%s\n", tomlw.Printable.Table("servers", s.Name, "oauth"))
		}
		for _, t := range s.DeniedTools {
			w("\n%s\n", tomlw.Printable.Table("servers", s.Name, "tools", t))
			field("policy", `"deny"`, "in disabled_tools in the source")
		}
	}
	return b.Bytes()
}

// Summary is one line for a person: what was imported and what to export.
func (r *Result) Summary() string {
	var imported, skipped int
	for _, s := range r.Servers {
		if s.Skipped == "" {
			imported++
		} else {
			skipped++
		}
	}
	msg := fmt.Sprintf("imported %d server%s from %s", imported, plural(imported), r.Format)
	if skipped > 0 {
		msg += fmt.Sprintf(", %d not imported (see the comments)", skipped)
	}
	var names []string
	for _, v := range r.Vars {
		names = append(names, v.Name)
	}
	if len(names) > 0 {
		msg += "; export " + strings.Join(names, ", ") + " before running airlock on it"
	}
	return msg
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
