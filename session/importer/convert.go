package importer

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airlock-mcp/airlock/internal/secrets"
	"github.com/airlock-mcp/airlock/internal/tomlw"
	"github.com/airlock-mcp/airlock/session/config"
)

// namePattern is airlock's rule for server names (session/config).
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`) })

// expansion is a place where the TOML holds ${VAR} that airlock itself does not
// expand (command, args, cwd, url): Result.Config fills it in for in-memory runs.
type expansion struct {
	server string
	field  string // command, args, cwd or url
	index  int    // the element of args
}

// spec is one source server decoded into typed fields, before names and secrets.
type spec struct {
	typ      string
	command  string
	args     []string
	cwd      string
	url      string
	env      map[string]string
	headers  map[string]string
	envHdrs  map[string]string // Codex env_http_headers: header -> variable
	bearer   string            // Codex bearer_token_env_var
	connect  time.Duration
	call     time.Duration
	denied   []string
	notes    []string
	hasEnv   bool
	hasHdrs  bool
	skip     string
	rawNames []string // keys seen, for transport-specific notes
}

type converter struct {
	src     *source
	opts    Options
	servers []Server
	notes   []string
	vars    map[string]*Var
	secrets *vault
	expand  []expansion
	inputs  map[string]string // VS Code input id -> what the person was asked
	taken   map[string]bool
}

func newConverter(src *source, opts Options) *converter {
	return &converter{
		src:     src,
		opts:    opts,
		vars:    map[string]*Var{},
		secrets: newVault(),
		inputs:  map[string]string{},
		taken:   map[string]bool{},
	}
}

func (c *converter) run() {
	for _, in := range c.src.inputs {
		m, ok := in.(map[string]any)
		if !ok {
			continue
		}
		id, _ := m["id"].(string)
		if id == "" {
			continue
		}
		about := fmt.Sprintf("VS Code input %s", tomlw.Printable.Quote(id))
		if d, _ := m["description"].(string); d != "" {
			about += ", " + tomlw.Printable.Quote(d)
		}
		if p, _ := m["password"].(bool); p {
			about += " (a password prompt)"
		}
		c.inputs[id] = about
	}

	specs := make([]*spec, len(c.src.servers))
	for i, rs := range c.src.servers {
		specs[i] = c.decode(rs)
	}
	// Names: those already valid keep them; the others are normalised in order.
	names := make([]string, len(specs))
	for i, rs := range c.src.servers {
		if specs[i].skip == "" && nameRE().MatchString(rs.name) && !c.taken[rs.name] {
			names[i] = rs.name
			c.taken[rs.name] = true
		}
	}
	for i, rs := range c.src.servers {
		if specs[i].skip == "" && names[i] == "" {
			names[i] = c.uniqueName(normaliseName(rs.name))
		}
	}
	for i, rs := range c.src.servers {
		c.servers = append(c.servers, c.build(rs.name, names[i], specs[i]))
	}
}

// normaliseName makes s a valid airlock server name: lower case, every run of other
// characters one "-", at most 32 characters.
func normaliseName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if b.Len() > 0 && !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimRight(b.String(), "-")
	if len(out) > 32 {
		out = strings.TrimRight(out[:32], "-")
	}
	if out == "" {
		out = "server"
	}
	return out
}

// uniqueName returns base, or base-2, base-3, ... (within 32 characters), whichever
// is free, and takes it.
func (c *converter) uniqueName(base string) string {
	name := base
	for n := 2; c.taken[name]; n++ {
		suffix := "-" + strconv.Itoa(n)
		b := base
		if len(b)+len(suffix) > 32 {
			b = strings.TrimRight(b[:32-len(suffix)], "-")
		}
		name = b + suffix
	}
	c.taken[name] = true
	return name
}

// decode reads one source server's fields with their types checked.
func (c *converter) decode(rs rawServer) *spec {
	sp := &spec{}
	m, ok := rs.v.(map[string]any)
	if !ok {
		sp.skip = fmt.Sprintf("want an object (a table) of settings, got %s", kindOf(rs.v))
		return sp
	}
	fail := func(key, want string, v any) {
		if sp.skip == "" {
			sp.skip = fmt.Sprintf("%s: want %s, got %s", key, want, kindOf(v))
		}
	}
	str := func(key string, v any) string {
		s, ok := v.(string)
		if !ok {
			fail(key, "a string", v)
		}
		return s
	}
	list := func(key string, v any) []string {
		arr, ok := v.([]any)
		if !ok {
			fail(key, "an array of strings", v)
			return nil
		}
		out := make([]string, 0, len(arr))
		for i, e := range arr {
			switch e := e.(type) {
			case string:
				out = append(out, e)
			case float64, int64, bool: // a number written without quotes
				out = append(out, scalar(e))
			default:
				fail(fmt.Sprintf("%s[%d]", key, i), "a string", e)
			}
		}
		return out
	}
	table := func(key string, v any) map[string]string {
		tm, ok := v.(map[string]any)
		if !ok {
			fail(key, "an object of strings", v)
			return nil
		}
		out := make(map[string]string, len(tm))
		for k, e := range tm {
			switch e := e.(type) {
			case string:
				out[k] = e
			case float64, int64, bool:
				out[k] = scalar(e)
			default:
				fail(key+"."+tomlw.Printable.Key(k), "a string", e)
			}
		}
		return out
	}
	seconds := func(key string, v any, unit time.Duration) time.Duration {
		var f float64
		switch n := v.(type) {
		case int64:
			f = float64(n)
		case float64:
			f = n
		default:
			fail(key, "a number", v)
			return 0
		}
		if f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) || f > float64(math.MaxInt64/int64(unit)) {
			sp.notes = append(sp.notes, fmt.Sprintf("%s = %v was not imported: want a positive number", key, f))
			return 0
		}
		return time.Duration(f * float64(unit)).Round(time.Millisecond)
	}

	codex := c.src.format == Codex
	for _, key := range slices.Sorted(maps.Keys(m)) {
		v := m[key]
		sp.rawNames = append(sp.rawNames, key)
		switch {
		case key == "command":
			sp.command = str(key, v)
		case key == "args":
			sp.args = list(key, v)
		case key == "cwd":
			sp.cwd = str(key, v)
		case key == "env":
			sp.env, sp.hasEnv = table(key, v), true
		case key == "url":
			sp.url = str(key, v)
		case key == "serverUrl" && !codex: // Windsurf's name for url
			sp.url = str(key, v)
		case key == "type" && !codex:
			sp.typ = str(key, v)
		case key == "headers" && !codex:
			sp.headers, sp.hasHdrs = table(key, v), true
		case key == "http_headers" && codex:
			sp.headers, sp.hasHdrs = table(key, v), true
		case key == "env_http_headers" && codex:
			sp.envHdrs, sp.hasHdrs = table(key, v), true
		case key == "bearer_token_env_var" && codex:
			sp.bearer, sp.hasHdrs = str(key, v), true
		case key == "bearer_token" && codex:
			if sp.headers == nil {
				sp.headers = map[string]string{}
			}
			sp.headers["Authorization"], sp.hasHdrs = "Bearer "+str(key, v), true
		case key == "startup_timeout_sec" && codex:
			sp.connect = seconds(key, v, time.Second)
		case key == "startup_timeout_ms" && codex:
			sp.connect = seconds(key, v, time.Millisecond)
		case key == "tool_timeout_sec" && codex:
			sp.call = seconds(key, v, time.Second)
		case key == "disabled_tools" && codex:
			sp.denied = list(key, v)
		case key == "enabled_tools" && codex:
			sp.notes = append(sp.notes, "enabled_tools was not imported: airlock lists every tool; deny the others with [servers.NAME.tools.TOOL] policy = \"deny\"")
		case key == "env_vars" && codex:
			sp.notes = append(sp.notes, "env_vars is not needed: airlock passes its whole environment to the servers it starts")
		case key == "enabled" && codex, key == "disabled" && !codex:
			if b, ok := v.(bool); ok && b == (key == "disabled") {
				sp.notes = append(sp.notes, "disabled in the source, but imported: remove it, or set trust = \"blocked\" to keep airlock from connecting")
			}
		case key == "envFile":
			sp.notes = append(sp.notes, "envFile was not read: put the variables it sets in [servers.NAME.env] (a secret as a ${VAR} reference)")
		case key == "autoApprove" || key == "alwaysAllow":
			sp.notes = append(sp.notes, key+" was not imported: airlock decides every call itself, from the tool's tier and your policy")
		default:
			sp.notes = append(sp.notes, fmt.Sprintf("%s was not imported: airlock has no such setting", tomlw.Printable.Quote(key)))
		}
	}
	if sp.skip != "" {
		return sp
	}
	c.transport(rs.name, sp)
	return sp
}

func scalar(v any) string {
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprint(v)
}

func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64, int64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// transport decides how airlock reaches the server, or why it cannot.
func (c *converter) transport(name string, sp *spec) {
	t := strings.ToLower(sp.typ)
	switch t {
	case "":
		switch {
		case sp.command != "" && sp.url != "":
			sp.skip = "it has both command and url and no type to choose between them"
			return
		case sp.command != "":
			t = "stdio"
		case sp.url != "":
			t = "http"
			if u, err := url.Parse(sp.url); err == nil && strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/sse") {
				t = "sse"
				sp.notes = append(sp.notes, "transport sse was guessed from the URL, which ends in /sse; set transport = \"http\" if the server speaks streamable HTTP")
			}
		default:
			sp.skip = "it has neither command nor url"
			return
		}
	case "stdio", "local":
		t = "stdio"
	case "http", "streamable-http", "streamablehttp", "streamable_http", "remote":
		t = "http"
	case "sse":
	default:
		sp.skip = fmt.Sprintf("type %s is not a transport airlock knows (stdio, http, sse)", tomlw.Printable.Quote(sp.typ))
		return
	}
	sp.typ = t
	if t == "stdio" {
		if sp.command == "" {
			sp.skip = "type stdio needs a command"
			return
		}
		if sp.url != "" {
			sp.notes = append(sp.notes, "url was not imported: the server is started with its command")
			sp.url = ""
		}
		if sp.hasHdrs {
			sp.notes = append(sp.notes, "headers were not imported: they are only for http and sse servers")
			sp.headers, sp.envHdrs, sp.bearer = nil, nil, ""
		}
		if base := strings.TrimSuffix(filepath.Base(sp.command), ".exe"); base == "airlock" && len(sp.args) > 0 && sp.args[0] == "bridge" {
			sp.skip = "it is airlock's own bridge to its agent gateway: importing it would connect airlock to itself"
		}
		return
	}
	if sp.url == "" {
		sp.skip = fmt.Sprintf("type %s needs a url", t)
		return
	}
	if why := checkURL(sp.url); why != "" {
		sp.skip = why
		return
	}
	if sp.command != "" || len(sp.args) > 0 || sp.hasEnv || sp.cwd != "" {
		sp.notes = append(sp.notes, "command, args, env and cwd were not imported: the server is reached at its url")
		sp.command, sp.args, sp.env, sp.cwd = "", nil, nil, ""
	}
	if name == "airlock" {
		if u, err := url.Parse(sp.url); err == nil {
			if ip := net.ParseIP(u.Hostname()); u.Hostname() == "localhost" || ip != nil && ip.IsLoopback() {
				sp.skip = "it looks like airlock's own agent gateway: importing it would connect airlock to itself"
			}
		}
	}
}

// build converts a decoded server under its airlock name, taking secrets out.
func (c *converter) build(source, name string, sp *spec) Server {
	s := Server{Source: source, Skipped: sp.skip}
	if sp.skip != "" {
		return s
	}
	s.Name = name
	s.Notes = sp.notes
	if name != source {
		s.Notes = append([]string{"renamed from " + tomlw.Printable.Quote(source) + ": server names match ^[a-z0-9][a-z0-9-]{0,31}$"}, s.Notes...)
	}
	s.Transport = config.Transport(sp.typ)
	s.ConnectTimeout, s.CallTimeout = sp.connect, sp.call
	s.DeniedTools = sp.denied
	at := func(parts ...string) string {
		return tomlw.Printable.Dotted(append([]string{"servers", name}, parts...)...)
	}

	if sp.command != "" {
		s.Command, s.commandNote = c.plain(&s, "command", 0, sp.command, at("command"))
	}
	if sp.cwd != "" {
		s.Cwd, s.cwdNote = c.plain(&s, "cwd", 0, sp.cwd, at("cwd"))
	}
	for i := range sp.args {
		a, note := c.arg(&s, sp.args, i, at("args")+"["+strconv.Itoa(i)+"]")
		s.Args = append(s.Args, a)
		if note != "" {
			if s.argNotes == nil {
				s.argNotes = map[int]string{}
			}
			s.argNotes[i] = note
		}
	}
	if len(sp.env) > 0 {
		s.Env, s.envNotes = map[string]string{}, map[string]string{}
		for _, k := range slices.Sorted(maps.Keys(sp.env)) {
			pref := k
			if !validVar(k) {
				pref = varName(name, k)
			}
			v, note := c.value(&s, k, sp.env[k], at("env", k), pref)
			s.Env[k] = v
			if note != "" {
				s.envNotes[k] = note
			}
		}
	}
	if s.Transport != config.TransportStdio {
		_, auth := sp.headers["Authorization"]
		s.URL, s.urlNote = c.url(&s, sp.url, at("url"), auth || sp.bearer != "" || sp.envHdrs["Authorization"] != "")
		hdr := func(k, v, note string) {
			if s.Headers == nil {
				s.Headers, s.headerNotes = map[string]string{}, map[string]string{}
			}
			s.Headers[k] = v
			if note != "" {
				s.headerNotes[k] = note
			}
		}
		for _, k := range slices.Sorted(maps.Keys(sp.headers)) {
			pref := varName(name, k)
			if hk := varName(k); strings.HasPrefix(hk, varName(name)+"_") {
				pref = hk // CONTEXT7_API_KEY, not CONTEXT7_CONTEXT7_API_KEY
			}
			if strings.EqualFold(k, "Authorization") {
				pref = varName(name, "token")
			}
			v, note := c.header(&s, k, sp.headers[k], at("headers", k), pref)
			hdr(k, v, note)
		}
		for _, k := range slices.Sorted(maps.Keys(sp.envHdrs)) {
			v := sp.envHdrs[k]
			if !validVar(v) {
				s.Notes = append(s.Notes, fmt.Sprintf("env_http_headers.%s was not imported: %s is not a variable name", tomlw.Printable.Key(k), tomlw.Printable.Quote(v)))
				continue
			}
			c.envVar(v, at("headers", k), "")
			hdr(k, "${"+v+"}", "")
		}
		if sp.bearer != "" {
			if validVar(sp.bearer) {
				c.envVar(sp.bearer, at("headers", "Authorization"), "")
				hdr("Authorization", "Bearer ${"+sp.bearer+"}", "")
			} else {
				s.Notes = append(s.Notes, fmt.Sprintf("bearer_token_env_var was not imported: %s is not a variable name", tomlw.Printable.Quote(sp.bearer)))
			}
		}
		_, auth = s.Headers["Authorization"]
		s.OAuth = s.Transport == config.TransportHTTP && !auth
	}
	return s
}

// refs rewrites the source's variable references in v as airlock ${NAME} references
// and registers each variable. changed reports whether v held a reference that
// airlock must expand; note explains anything lost.
func (c *converter) refs(v, where string) (out string, changed bool, note string) {
	if !strings.Contains(v, "${") {
		return v, false, ""
	}
	var b strings.Builder
	var notes []string
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			break
		}
		b.WriteString(v[:i])
		end := strings.IndexByte(v[i+2:], '}')
		if end < 0 { // not a reference: "${" with no end; airlock would reject it
			b.WriteString("$ {")
			v = v[i+2:]
			notes = append(notes, `an unterminated "${" became "$ {"`)
			continue
		}
		inner := v[i+2 : i+2+end]
		v = v[i+2+end+1:]
		name, literal, about := c.ref(inner)
		if literal != "" || name == "" {
			b.WriteString(literal)
			continue
		}
		if strings.Contains(inner, ":-") {
			notes = append(notes, "the source's default for "+name+" is not kept: export "+name)
		}
		c.envVar(name, where, about)
		b.WriteString("${" + name + "}")
		changed = true
	}
	return b.String(), changed, strings.Join(notes, "; ")
}

// ref interprets the inside of one ${...}: an environment variable's name and what it
// is about, or a literal that replaces the whole reference.
func (c *converter) ref(inner string) (name, literal, about string) {
	if c.src.format == VSCode {
		kind, arg, _ := strings.Cut(inner, ":")
		switch {
		case kind == "env" && arg != "":
			if validVar(arg) {
				return arg, "", ""
			}
			return varName(arg), "", ""
		case kind == "input" && arg != "":
			about, ok := c.inputs[arg]
			if !ok {
				about = fmt.Sprintf("VS Code input %s, which the file does not define", tomlw.Printable.Quote(arg))
			}
			return varName(arg), "", about
		case inner == "workspaceFolder" && c.opts.WorkspaceFolder != "":
			return "", c.opts.WorkspaceFolder, ""
		case inner == "userHome" && c.opts.Home != "":
			return "", c.opts.Home, ""
		case inner == "userHome":
			return "HOME", "", ""
		}
		return varName(inner), "", fmt.Sprintf("VS Code's %s, which airlock does not know", tomlw.Printable.Quote("${"+inner+"}"))
	}
	name, _, _ = strings.Cut(inner, ":-") // Claude Code's ${VAR:-default}
	if validVar(name) {
		return name, "", ""
	}
	return varName(inner), "", fmt.Sprintf("the source's %s", tomlw.Printable.Quote("${"+inner+"}"))
}

// plain converts a field airlock does not expand variables in (command, cwd).
func (c *converter) plain(s *Server, field string, index int, v, where string) (string, string) {
	out, changed, note := c.refs(v, where)
	if changed {
		c.expand = append(c.expand, expansion{server: s.Name, field: field, index: index})
		note = join(note, noExpand(field))
	}
	return out, note
}

func noExpand(field string) string {
	return "airlock does not expand ${...} in " + field + ": write the value in (airlock --from does it for you)"
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "; " + b
}

// kvRE matches an argument that pairs a key with a value: --token=x, KEY=x,
// "Authorization: Bearer x".
var kvRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(-{0,2}[A-Za-z_][A-Za-z0-9_.-]*)(=|:\s*)(.+)$`) })

// arg converts args[i], taking out a secret it holds. airlock expands ${VAR} in args,
// so a secret taken out is restored from the environment (or, with airlock --from,
// from the source file in memory).
func (c *converter) arg(s *Server, args []string, i int, where string) (string, string) {
	a := args[i]
	secret := func(prefix, value, pref string) (string, string) {
		scheme, cred := secrets.SplitScheme(value)
		name := c.secretVar(pref, cred, where, s.Name)
		return prefix + scheme + "${" + name + "}", "a secret, not copied: export " + name
	}
	// The value of a flag named like a secret: --api-key VALUE, -p VALUE.
	if i > 0 && !strings.HasPrefix(a, "-") {
		if prev := args[i-1]; strings.HasPrefix(prev, "-") && !strings.ContainsAny(prev, "= ") && flagSecret(prev) && a != "" && !strings.Contains(a, "${") {
			return secret("", a, varName(s.Name, strings.TrimLeft(prev, "-")))
		}
	}
	if u, ok := c.redact(s, a, where, userInPlace); ok {
		return u, "a secret in the URL, not copied: export " + c.secretNames(u)
	}
	if m := kvRE().FindStringSubmatch(a); m != nil && !strings.Contains(m[3], "${") && !strings.ContainsAny(m[3], ";&|") &&
		(!strings.ContainsAny(m[3], " \t") || secrets.HasScheme(m[3])) &&
		(isSecret(m[1], m[3]) || strings.HasPrefix(m[1], "-") && m[2] == "=" && flagSecret(m[1])) {
		return secret(m[1]+m[2], m[3], varName(s.Name, strings.TrimLeft(m[1], "-")))
	}
	if out, note, ok := c.inside(s, a, where, varName(s.Name, "arg", strconv.Itoa(i))); ok {
		return out, note
	}
	if !strings.Contains(a, "${") && secrets.Import.Value(a) {
		return secret("", a, varName(s.Name, "arg", strconv.Itoa(i)))
	}
	out, _, note := c.refs(a, where)
	return out, note
}

// inside takes out the secrets found inside a longer value (a JSON text, a shell
// command, a connection string; see jsonSecrets and inlineSecrets), each becoming its
// own ${VAR}; the rest of the value is kept, its own ${...} references converted. ok
// is false when nothing was found.
func (c *converter) inside(s *Server, v, where, pref string) (string, string, bool) {
	spans := jsonSecrets(v)
	if spans == nil {
		spans = inlineSecrets(v)
	}
	if len(spans) == 0 {
		return v, "", false
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	var b strings.Builder
	var names, notes []string
	pos := 0
	for _, sp := range spans {
		if sp.start < pos || sp.end <= sp.start {
			continue // overlaps one already taken out
		}
		gap, _, note := c.refs(v[pos:sp.start], where)
		b.WriteString(gap)
		if note != "" {
			notes = append(notes, note)
		}
		p := pref
		if sp.key != "" {
			p = varName(s.Name, sp.key)
		}
		name := c.secretVar(p, v[sp.start:sp.end], where, s.Name)
		names = append(names, name)
		b.WriteString("${" + name + "}")
		pos = sp.end
	}
	gap, _, note := c.refs(v[pos:], where)
	b.WriteString(gap)
	if note != "" {
		notes = append(notes, note)
	}
	return b.String(), join("secrets inside the value, not copied: export "+strings.Join(names, ", "), strings.Join(notes, "; ")), true
}

// value converts an env or header value: references become airlock's, and a secret
// becomes a ${VAR} reference (after any Authorization scheme, which stays). Secrets
// inside a longer value (JSON, a connection string) become references each.
func (c *converter) value(s *Server, key, v, where, pref string) (string, string) {
	out, changed, note := c.refs(v, where)
	scheme, cred := secrets.SplitScheme(out)
	if changed || strings.Contains(cred, "${") {
		return out, note // the source already kept the secret out
	}
	if isSecret(key, out) {
		name := c.secretVar(pref, cred, where, s.Name)
		return scheme + "${" + name + "}", "a secret, not copied: export " + name
	}
	if in, note, ok := c.inside(s, v, where, pref); ok {
		return in, note
	}
	return out, note
}

// secretNames lists the secret variables v refers to.
func (c *converter) secretNames(v string) string {
	var names []string
	for _, m := range refNameRE().FindAllStringSubmatch(v, -1) {
		if sv, ok := c.vars[m[1]]; ok && sv.Secret && !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	return strings.Join(names, ", ")
}

var refNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`) })

// header converts a header value: any non-empty value of a header that is not a
// well-known non-secret one is taken out whole, whatever it looks like.
func (c *converter) header(s *Server, key, v, where, pref string) (string, string) {
	if v == "" || nonSecretHeaders[strings.ToLower(key)] || strings.Contains(v, "${") || isSecret(key, v) {
		return c.value(s, key, v, where, pref)
	}
	scheme, cred := secrets.SplitScheme(v)
	name := c.secretVar(pref, cred, where, s.Name)
	return scheme + "${" + name + "}", "a custom header's value, taken out in case it is a secret: export " + name
}

// url converts the server's URL (checkURL has passed it). Credentials in it are
// taken out: a user:password becomes an Authorization: Basic header (dropped with a
// note when the server has its own), a secret query value or path segment a ${VAR}.
func (c *converter) url(s *Server, raw, where string, hasAuth bool) (string, string) {
	out, _, note := c.refs(raw, where)
	mode := userToHeader
	if hasAuth {
		mode = userDrop
	}
	if red, ok := c.redact(s, out, where, mode); ok {
		out = red
		if names := c.secretNames(red); names != "" {
			note = join(note, "a secret in the URL, not copied: export "+names)
		}
	}
	return out, note
}

// refAnyRE matches any ${...} reference, for checking a URL before converting it.
var refAnyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{[^}]*\}`) })

// checkURL reports why raw cannot be a server's URL, or "". A reference is checked
// as if it held a plain word, except in the host, which airlock cannot expand.
func checkURL(raw string) string {
	if _, rest, ok := strings.Cut(raw, "://"); ok {
		host := rest
		if end := strings.IndexAny(rest, "/?#"); end >= 0 {
			host = rest[:end]
		}
		if strings.Contains(host, "${") {
			return "url: airlock cannot reach a URL whose host is a variable; write the host in"
		}
	}
	u, err := url.Parse(refAnyRE().ReplaceAllString(raw, "x"))
	switch {
	case err != nil:
		return "url: not a valid URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("url: want http or https, got scheme %s", tomlw.Printable.Quote(u.Scheme))
	case u.Host == "":
		return "url: it has no host"
	}
	return ""
}

// What redact does with a user and password in a URL.
type userMode int

const (
	userInPlace  userMode = iota // a ${VAR} in place (a URL in args)
	userToHeader                 // an Authorization: Basic header (the server's url)
	userDrop                     // dropped with a note (the server has its own Authorization)
)

// schemeNameRE matches a URL scheme (RFC 3986).
var schemeNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`) })

// redact takes the secrets out of raw when it is a URL (http, or a database URL in
// an argument): its user info as mode says, and query values and path segments that
// look like secrets. It reports whether anything was taken out.
func (c *converter) redact(s *Server, raw, where string, mode userMode) (string, bool) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || !schemeNameRE().MatchString(scheme) {
		return raw, false
	}
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	authority, tail := rest[:authEnd], rest[authEnd:]
	changed := false
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		userinfo, host := authority[:at], authority[at+1:]
		user, pass, hasPass := strings.Cut(userinfo, ":")
		u, _ := url.PathUnescape(user)
		p, _ := url.PathUnescape(pass)
		if hasPass && p != "" || u != "" {
			// Any user info is taken out: a token often stands alone as the user.
			changed = true
			switch {
			case mode == userDrop:
				authority = host
				s.Notes = append(s.Notes, "the user and password in the URL were dropped: the server has an Authorization header")
			case mode == userToHeader:
				authority = host
				name := c.secretVar(varName(s.Name, "basic", "auth"), base64.StdEncoding.EncodeToString([]byte(u+":"+p)), tomlw.Printable.Dotted("servers", s.Name, "headers", "Authorization"), s.Name)
				if s.Headers == nil {
					s.Headers, s.headerNotes = map[string]string{}, map[string]string{}
				}
				s.Headers["Authorization"] = "Basic ${" + name + "}"
				s.headerNotes["Authorization"] = "the user and password from the URL, not copied: export " + name + " (base64 of user:password)"
			case hasPass:
				name := c.secretVar(varName(s.Name, "password"), pass, where, s.Name)
				authority = user + ":${" + name + "}@" + host
			default:
				name := c.secretVar(varName(s.Name, "user"), user, where, s.Name)
				authority = "${" + name + "}@" + host
			}
		}
	}
	path, query, frag := tail, "", ""
	if i := strings.IndexByte(path, '#'); i >= 0 {
		path, frag = path[:i], path[i:]
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path, query = path[:i], path[i+1:]
	}
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		if d, err := url.PathUnescape(seg); err == nil && !strings.Contains(d, "${") && secrets.Import.Value(d) {
			segs[i] = "${" + c.secretVar(varName(s.Name, "url", "secret"), seg, where, s.Name) + "}"
			changed = true
		}
	}
	if len(frag) > 1 && !strings.Contains(frag, "${") {
		// A fragment carries access tokens (OAuth's implicit flow) and is never sent
		// to the server: taken out whole.
		frag = "#${" + c.secretVar(varName(s.Name, "url", "fragment"), frag[1:], where, s.Name) + "}"
		changed = true
	}
	params := strings.Split(query, "&")
	for i, p := range params {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		dk, _ := url.QueryUnescape(k)
		dv, err := url.QueryUnescape(v)
		if err == nil && !strings.Contains(dv, "${") && isSecret(dk, dv) {
			params[i] = k + "=${" + c.secretVar(varName(s.Name, dk), v, where, s.Name) + "}"
			changed = true
		}
	}
	if !changed {
		return raw, false
	}
	out := scheme + "://" + authority + strings.Join(segs, "/")
	if query != "" {
		out += "?" + strings.Join(params, "&")
	}
	return out + frag, true
}

// secretVar names the variable that stands for a secret value, kept as it was
// written in the source so that putting it back restores the source exactly: pref
// if it is free or already holds the same value, else a name prefixed with the
// server's, numbered if need be.
func (c *converter) secretVar(pref, value, where, server string) string {
	cands := []string{pref}
	if p := varName(server); !strings.HasPrefix(pref, p+"_") {
		cands = append(cands, varName(server, pref))
	}
	base := cands[len(cands)-1]
	for n := 2; ; n++ {
		for _, name := range cands {
			v, used := c.vars[name]
			if !used {
				c.vars[name] = &Var{Name: name, Secret: true, Where: []string{where}}
				c.secrets.m[name] = value
				return name
			}
			if v.Secret && c.secrets.m[name] == value {
				v.Where = append(v.Where, where)
				return name
			}
		}
		cands = []string{base + "_" + strconv.Itoa(n)}
	}
}

// envVar registers a variable the source read from its environment (or asked for).
func (c *converter) envVar(name, where, about string) {
	if v, ok := c.vars[name]; ok {
		if !slices.Contains(v.Where, where) {
			v.Where = append(v.Where, where)
		}
		if v.About == "" {
			v.About = about
		}
		return
	}
	c.vars[name] = &Var{Name: name, Where: []string{where}, About: about}
}

func (c *converter) varList() []Var {
	out := make([]Var, 0, len(c.vars))
	for _, name := range slices.Sorted(maps.Keys(c.vars)) {
		out = append(out, *c.vars[name])
	}
	return out
}
