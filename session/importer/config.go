package importer

import (
	"fmt"
	"strings"

	"github.com/airlock-mcp/airlock/session/config"
)

// Lookup returns an environment lookup for the imported TOML: a secret taken out of
// the source is found under its variable, anything else in env (nil means none).
// The secrets only ever live in memory: this is how `airlock --from` runs on a file
// without the person exporting anything the file already holds.
func (r *Result) Lookup(env func(string) (string, bool)) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if v, ok := r.secrets.m[name]; ok {
			return v, true
		}
		if env == nil {
			return "", false
		}
		return env(name)
	}
}

// Config parses the imported TOML as airlock would (config.Parse, with Lookup(env)
// for ${VAR}) and then fills in the ${VAR} references the importer wrote where
// airlock does not expand variables (command, args, cwd, url), so the servers run
// as the source would run them. Config.Path is "": nothing is ever written next to
// the source file. An error is a config.Parse error, or names a variable that is not
// set.
func (r *Result) Config(env func(string) (string, bool)) (*config.Config, error) {
	lookup := r.Lookup(env)
	c, err := config.Parse(r.TOML, r.Source+" (imported)", lookup)
	if err != nil {
		return nil, err
	}
	c.Path = ""
	idx := map[string]int{}
	for i, s := range c.Servers {
		idx[s.Name] = i
	}
	for _, e := range r.expand {
		i, ok := idx[e.server]
		if !ok {
			continue
		}
		s := &c.Servers[i]
		var p *string
		switch e.field {
		case "command":
			p = &s.Command
		case "cwd":
			p = &s.Cwd
		case "url":
			p = &s.URL
		case "args":
			if e.index < len(s.Args) {
				p = &s.Args[e.index]
			}
		}
		if p == nil {
			continue
		}
		v, err := expand(*p, lookup)
		if err != nil {
			return nil, fmt.Errorf("servers.%s.%s: %w", s.Name, e.field, err)
		}
		*p = v
	}
	return c, nil
}

// expand replaces each ${NAME} in s from lookup.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		name := s[i+2 : i+end]
		v, ok := lookup(name)
		if !ok {
			return "", fmt.Errorf("environment variable %s is not set", name)
		}
		b.WriteString(s[:i])
		b.WriteString(v)
		s = s[i+end+1:]
	}
}
