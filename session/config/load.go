package config

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/BurntSushi/toml"

	"github.com/airlock-mcp/airlock/trust"
)

// Default is the configuration used when there is no file: the default policy (reads
// run, writes and destructive calls ask), the default approval timeout, no gateway
// and no servers. StateDir and AuditPath are empty; Parse of an empty file gives the
// same configuration with StateDir set to DefaultStateDir.
func Default() *Config {
	return &Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: DefaultApprovalTimeout}
}

// DefaultPath is where the config file lives unless --config says otherwise:
// config.toml in $XDG_CONFIG_HOME/airlock when XDG_CONFIG_HOME is an absolute path,
// else in the platform's config folder (~/.config/airlock on Linux,
// ~/Library/Application Support/airlock on macOS, %APPDATA%\airlock on Windows).
func DefaultPath() (string, error) {
	dir, err := configDirFor(runtime.GOOS, os.LookupEnv)
	if err != nil {
		return "", fmt.Errorf("finding the config file: %w", err)
	}
	return filepath.Join(dir, "config.toml"), nil
}

// DefaultStateDir is where pins, the gateway token and the audit log live unless the
// config sets state_dir: $XDG_STATE_HOME/airlock when XDG_STATE_HOME is an absolute
// path, else ~/.local/state/airlock on Linux, ~/Library/Application
// Support/airlock/state on macOS, %LOCALAPPDATA%\airlock on Windows.
func DefaultStateDir() (string, error) {
	return defaultStateDir(os.LookupEnv)
}

func defaultStateDir(env func(string) (string, bool)) (string, error) {
	dir, err := stateDirFor(runtime.GOOS, env)
	if err != nil {
		return "", fmt.Errorf("finding the state directory: %w", err)
	}
	return dir, nil
}

// Load reads and parses the config file at path, expanding ${VAR} from the process
// environment. An error reading the file wraps the os error (errors.Is(err,
// fs.ErrNotExist) when it is missing); otherwise see Parse.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return Parse(data, path, os.LookupEnv)
}

// Parse parses and validates a config file's contents. path is used in error
// messages and as Config.Path; env looks up the variables for ${VAR} in args, env,
// url and header values (and oauth client_secret) and XDG_STATE_HOME and HOME for the default state dir (nil means
// os.LookupEnv).
//
// A TOML syntax error is returned alone, as an *Error reading "FILE:LINE:COL:
// message"; so are tables given a value that is not a table (policy = "ask").
// Otherwise every unknown key and every invalid value is reported, each an *Error
// naming its line and key path, joined with errors.Join in line order. Errors never
// quote a header or env value, which may hold a secret.
func Parse(data []byte, path string, env func(string) (string, bool)) (*Config, error) {
	if env == nil {
		env = os.LookupEnv
	}
	file := path
	if file == "" {
		file = "config"
	}
	var raw rawConfig
	lines, probs, err := decodeTwice(data, file, &raw)
	if err != nil {
		return nil, err
	}
	b := builder{env: env, home: homeDir(env)}
	c := b.build(&raw, path)
	probs = append(probs, b.probs...)
	// Validate the built config, leaving out what the build already reported and
	// what follows from it: a value of the wrong type was left out, so a server whose
	// command was a number has no command, and "set command or url" would mislead.
	reported := probs
	for _, v := range c.problems() {
		if !slices.ContainsFunc(reported, func(r *Error) bool {
			return r.Key == v.Key && r.Msg == v.Msg || r.wrongType && len(r.k) == len(v.k)+1 && below(r.k, v.k)
		}) {
			probs = append(probs, v)
		}
	}
	if len(probs) > 0 {
		probs.locate(file, lines)
		return nil, probs.err()
	}
	nameRules(c, file, lines)
	return c, nil
}

// decodeTwice decodes a config or policy file's text into raw (a *rawConfig or a
// *rawPolicyFile) in two passes. The first checks the syntax and that every table
// is a table, so that the second, into raw's typed structs, cannot stop at a type
// mismatch; either failure is the error, located and alone. It returns each key
// path's line and the unknown keys, which the caller reports with its own.
func decodeTwice(data []byte, file string, raw any) (lines map[string]int, unknown problems, err error) {
	src := string(data)
	var tree map[string]any
	if _, err := toml.Decode(src, &tree); err != nil {
		return nil, nil, syntaxError(file, src, err)
	}
	lines = keyLines(src)
	root := reflect.TypeOf(raw).Elem()
	var probs problems
	checkShape(&probs, tree, root, nil)
	if len(probs) > 0 {
		probs.locate(file, lines)
		return nil, nil, probs.err()
	}
	md, err := toml.Decode(src, raw)
	if err != nil { // not expected after checkShape
		return nil, nil, syntaxError(file, src, err)
	}
	return lines, unknownKeys(&md, root), nil
}

// value is any TOML value, kept as decoded so that its type can be checked with a
// message naming its key. Decoding into it marks every key below it as decoded.
type value struct {
	v   any
	set bool
}

// UnmarshalTOML keeps data.
func (v *value) UnmarshalTOML(data any) error {
	v.v, v.set = data, true
	return nil
}

var valueType = reflect.TypeFor[value]()

// The raw config: the file's tables and keys as decoded, before validation.
type rawConfig struct {
	StateDir  value                 `toml:"state_dir"`
	RulesFile value                 `toml:"rules_file"`
	Policy    *rawPolicy            `toml:"policy"`
	Gateway   *rawGateway           `toml:"gateway"`
	Audit     *rawAudit             `toml:"audit"`
	Limits    *rawLimits            `toml:"limits"`
	Notify    *rawNotify            `toml:"notify"`
	Servers   map[string]*rawServer `toml:"servers"`
}

// maxTaintPruneDays bounds limits.taint_prune_after_days (100 years), so that the
// age in days times a day fits a time.Duration.
const maxTaintPruneDays = 36500

type rawLimits struct {
	MaxArgsBytes         value `toml:"max_args_bytes"`
	MaxWaitingPerContext value `toml:"max_waiting_per_context"`
	MaxWaitingBytes      value `toml:"max_waiting_bytes"`
	TaintPruneAfterDays  value `toml:"taint_prune_after_days"`
	CallsPerMinute       value `toml:"calls_per_minute"`
	RateAction           value `toml:"rate_action"`
}

// rawNotify is the [notify] table.
type rawNotify struct {
	Command value `toml:"command"`
}

type rawPolicy struct {
	Read            value `toml:"read"`
	Write           value `toml:"write"`
	Destructive     value `toml:"destructive"`
	ApprovalTimeout value `toml:"approval_timeout"`
}

type rawGateway struct {
	Listen      value `toml:"listen"`
	AllowRemote value `toml:"allow_remote"`
	NameBudget  value `toml:"name_budget"`
}

type rawAudit struct {
	Path              value `toml:"path"`
	SyncBeforeForward value `toml:"sync_before_forward"`
	SegmentBytes      value `toml:"segment_bytes"`
}

type rawServer struct {
	Command        value               `toml:"command"`
	Args           value               `toml:"args"`
	Env            value               `toml:"env"`
	Cwd            value               `toml:"cwd"`
	URL            value               `toml:"url"`
	Transport      value               `toml:"transport"`
	Headers        value               `toml:"headers"`
	InheritEnv     value               `toml:"inherit_env"`
	Protocol       value               `toml:"protocol"`
	ConnectTimeout value               `toml:"connect_timeout"`
	CallTimeout    value               `toml:"call_timeout"`
	Trust          value               `toml:"trust"`
	Labels         value               `toml:"labels"`
	Tools          map[string]*rawTool `toml:"tools"`
	OAuth          *rawOAuth           `toml:"oauth"`
	Elicitation    value               `toml:"elicitation"`
	Resources      value               `toml:"resources"`
	Prompts        value               `toml:"prompts"`
	Roots          value               `toml:"roots"`
	Sandbox        *rawSandbox         `toml:"sandbox"`
	Rate           value               `toml:"rate"`
	RateAction     value               `toml:"rate_action"`
}

type rawSandbox struct {
	Read       value `toml:"read"`
	Write      value `toml:"write"`
	Network    value `toml:"network"`
	Required   value `toml:"required"`
	Memory     value `toml:"memory"`
	CPUSeconds value `toml:"cpu_seconds"`
	Processes  value `toml:"processes"`
}

type rawOAuth struct {
	ClientID          value `toml:"client_id"`
	ClientSecret      value `toml:"client_secret"`
	ClientMetadataURL value `toml:"client_metadata_url"`
	Issuer            value `toml:"issuer"`
	Scopes            value `toml:"scopes"`
	RedirectPort      value `toml:"redirect_port"`
}

type rawTool struct {
	Policy      value `toml:"policy"`
	ReadOnly    value `toml:"read_only"`
	Destructive value `toml:"destructive"`
	Idempotent  value `toml:"idempotent"`
	OpenWorld   value `toml:"open_world"`
	Labels      value `toml:"labels"`
	Rules       value `toml:"rules"`
	Rate        value `toml:"rate"`
	RateAction  value `toml:"rate_action"`
}

// field finds the field toml decodes key into, as toml does: an exact tag match,
// else a case-insensitive one (exact false).
func field(t reflect.Type, key string) (f reflect.StructField, exact, ok bool) {
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("toml"), ",")
		if name == key {
			return sf, true, true
		}
		if !ok && strings.EqualFold(name, key) {
			f, ok = sf, true
		}
	}
	return f, false, ok
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// checkShape reports every key that the raw structs decode as a table but whose
// value is not a table.
func checkShape(p *problems, data any, t reflect.Type, key toml.Key) {
	t = deref(t)
	if t == valueType || (t.Kind() != reflect.Struct && t.Kind() != reflect.Map) {
		return
	}
	m, ok := data.(map[string]any)
	if !ok {
		p.add(key, "want a table, got %s", describe(data))
		return
	}
	for k, v := range m {
		sub := append(slices.Clip(key), k)
		if t.Kind() == reflect.Map {
			checkShape(p, v, t.Elem(), sub)
		} else if f, _, ok := field(t, k); ok {
			checkShape(p, v, f.Type, sub)
		}
	}
}

// unknownKeys reports the keys toml did not decode, and those it matched to a field
// only case-insensitively. Below an unknown key nothing more is reported, nor inside
// a value (an array of inline tables, say), whose type the builder checks.
func unknownKeys(md *toml.MetaData, root reflect.Type) problems {
	var p problems
	seen := make(map[string]bool)
	report := func(k toml.Key, hint string) {
		for n := 1; n <= len(k); n++ {
			if seen[k[:n].String()] {
				return
			}
		}
		seen[k.String()] = true
		e := &Error{Key: k.String(), k: k, unknown: true, Msg: hint}
		if k.String() == "policy.blocked" {
			e.unknown = false
			e.Msg = "the blocked tier is always deny; only read, write and destructive can be set"
		}
		p = append(p, e)
	}
	// Undecoded and Keys list keys in document order, so a table comes before its keys.
	for _, k := range md.Undecoded() {
		if n, _ := walkKey(root, k); n >= 0 {
			report(k, "")
		}
	}
	for _, k := range md.Keys() {
		if n, name := walkKey(root, k); name != "" {
			report(k[:n+1], "did you mean "+name+"?")
		}
	}
	return p
}

// walkKey follows k through the raw structs from root as toml does. When a part matches a
// field only case-insensitively it returns that part's index and the field's name;
// when k ends inside a value it returns -1; otherwise len(k) and "".
func walkKey(root reflect.Type, k toml.Key) (int, string) {
	t := root
	for i, part := range k {
		t = deref(t)
		switch {
		case t == valueType:
			return -1, ""
		case t.Kind() == reflect.Map:
			t = t.Elem()
		case t.Kind() == reflect.Struct:
			f, exact, ok := field(t, part)
			if !ok {
				return len(k), ""
			}
			if !exact {
				name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
				return i, name
			}
			t = f.Type
		default:
			return len(k), ""
		}
	}
	return len(k), ""
}

// describe names a decoded TOML value's type for an error message, without its
// value (which may be a secret).
func describe(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case time.Time:
		return "date-time"
	case []any:
		return "array"
	case map[string]any:
		return "table"
	case []map[string]any:
		return "array of tables"
	}
	return fmt.Sprintf("%T", v)
}

// builder turns the raw config into a Config, reporting values of the wrong type or
// that do not parse. What is left for Config.Validate (names, combinations, ranges)
// is not checked here. A value that fails keeps its default.
type builder struct {
	env   func(string) (string, bool)
	home  string // the home folder that expands ~ in rule globs ("" when unknown)
	probs problems
	// ownDirs are airlock's config and state folders, which no fenced server may
	// write, in or around ("config", "state"), and the config file, which it may
	// not write by holding its folder ("file").
	ownDirs map[string][]string
}

func (b *builder) build(raw *rawConfig, path string) *Config {
	c := Default()
	c.Path = path

	if f, ok := b.str(toml.Key{"rules_file"}, raw.RulesFile); ok {
		c.RulesFile = f
	}
	if dir, ok := b.str(toml.Key{"state_dir"}, raw.StateDir); ok && dir != "" {
		c.StateDir = dir
	} else if dir, err := defaultStateDir(b.env); err != nil {
		b.probs.add(toml.Key{"state_dir"}, "%v; set state_dir", err)
	} else {
		c.StateDir = dir
	}
	b.ownDirs = map[string][]string{"state": {c.StateDir}}
	if dir, err := configDirFor(runtime.GOOS, b.env); err == nil {
		b.ownDirs["config"] = append(b.ownDirs["config"], dir)
	}
	if path != "" {
		if abs, err := filepath.Abs(path); err == nil {
			b.ownDirs["file"] = []string{abs}
		}
	}

	if p := raw.Policy; p != nil {
		b.action(toml.Key{"policy", "read"}, p.Read, &c.Policy.Read)
		b.action(toml.Key{"policy", "write"}, p.Write, &c.Policy.Write)
		b.action(toml.Key{"policy", "destructive"}, p.Destructive, &c.Policy.Destructive)
		b.duration(toml.Key{"policy", "approval_timeout"}, p.ApprovalTimeout, &c.ApprovalTimeout)
	}

	if g := raw.Gateway; g != nil {
		// Only listen turns the gateway on: a table that says how names are served
		// or allows a remote address configures the runs that pass --gateway ADDR.
		c.Gateway = &Gateway{}
		if s, ok := b.str(toml.Key{"gateway", "listen"}, g.Listen); ok && s != "" {
			c.Gateway.Listen = s
		}
		if v := b.boolean(toml.Key{"gateway", "allow_remote"}, g.AllowRemote); v != nil {
			c.Gateway.AllowRemote = *v
		}
		k := toml.Key{"gateway", "name_budget"}
		if n, ok := setAs[int64](b, k, g.NameBudget, "an integer"); ok && (n < 1 || n > trust.MaxServedNameLen) {
			b.probs.add(k, "want an integer from 1 to %d (the longest tool name agent clients accept, their prefix included), got %d", trust.MaxServedNameLen, n)
		} else if ok {
			c.Gateway.NameBudget = int(n)
		}
	}

	if l := raw.Limits; l != nil {
		b.readLimits(l, &c.Limits)
	}

	if n := raw.Notify; n != nil && n.Command.set {
		k := toml.Key{"notify", "command"}
		cmd := b.strList(k, n.Command)
		if cmd != nil && (len(cmd) == 0 || cmd[0] == "") {
			b.probs.add(k, "want the program and its arguments, e.g. [\"notify-send\", \"airlock\"]")
		} else if cmd != nil {
			c.NotifyCommand = cmd
		}
	}

	if a := raw.Audit; a != nil {
		c.AuditPath, _ = b.str(toml.Key{"audit", "path"}, a.Path)
		if v := b.boolean(toml.Key{"audit", "sync_before_forward"}, a.SyncBeforeForward); v != nil {
			c.AuditDecisionsUnsynced = !*v
		}
		var n int64
		if b.positive(toml.Key{"audit", "segment_bytes"}, a.SegmentBytes, &n) {
			c.AuditSegmentBytes = n
		}
	}

	names := make([]string, 0, len(raw.Servers))
	for name := range raw.Servers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		c.Servers = append(c.Servers, b.server(name, raw.Servers[name]))
	}
	return c
}

func (b *builder) server(name string, r *rawServer) Server {
	k := toml.Key{"servers", name}
	at := func(key ...string) toml.Key { return append(slices.Clip(k), key...) }
	s := Server{
		Name:           name,
		ConnectTimeout: DefaultConnectTimeout,
		CallTimeout:    DefaultCallTimeout,
	}
	if r == nil { // [servers] with a key set to an empty inline table
		r = &rawServer{}
	}
	if !validName(name) {
		b.probs.add(k, "server name must match %s", namePattern)
	}
	s.Command, _ = b.str(at("command"), r.Command)
	s.Args = b.strList(at("args"), r.Args, func(i int, a string) string {
		s.ArgsAsWritten = append(s.ArgsAsWritten, a)
		v, msgs := expandVars(a, b.env)
		for _, msg := range msgs {
			b.probs.addAt(at("args"), i, "%s", msg)
		}
		return v
	})
	s.Env = b.strMap(at("env"), r.Env)
	s.Cwd, _ = b.str(at("cwd"), r.Cwd)
	if u, ok := b.str(at("url"), r.URL); ok {
		s.URLAsWritten = u
		v, msgs := expandVars(u, b.env)
		for _, msg := range msgs {
			b.probs.add(at("url"), "%s", msg)
		}
		if len(msgs) == 0 {
			s.URL = v
		} else {
			s.URL = u // keeps the transport inferred; the value is never shown
		}
	}
	s.InheritEnv = b.strList(at("inherit_env"), r.InheritEnv, func(i int, name string) string {
		if !validVarName(name) {
			b.probs.addAt(at("inherit_env"), i, "want an environment variable name (letters, digits and _, not starting with a digit), got %q", name)
		}
		return name
	})
	s.Headers = b.strMap(at("headers"), r.Headers)
	s.Protocol, _ = b.str(at("protocol"), r.Protocol)
	b.duration(at("connect_timeout"), r.ConnectTimeout, &s.ConnectTimeout)
	b.duration(at("call_timeout"), r.CallTimeout, &s.CallTimeout)
	b.action(at("resources"), r.Resources, &s.Resources)
	b.action(at("prompts"), r.Prompts, &s.Prompts)
	s.Rate = b.rate(k, r.Rate, r.RateAction)

	if t, ok := b.str(at("transport"), r.Transport); ok && t != "" {
		s.Transport = Transport(t)
	} else if s.Command != "" && s.URL == "" {
		s.Transport = TransportStdio
	} else if s.URL != "" && s.Command == "" {
		s.Transport = TransportHTTP
	}

	if t, ok := b.str(at("trust"), r.Trust); ok {
		if st, ok := trust.ParseServerTrust(t); ok {
			s.Trust = st
		} else {
			b.probs.add(at("trust"), "want trusted|untrusted|blocked, got %q", t)
		}
	}
	s.Labels = b.legs(at("labels"), r.Labels)

	tools := make([]string, 0, len(r.Tools))
	for tool := range r.Tools {
		tools = append(tools, tool)
	}
	slices.Sort(tools)
	for _, tool := range tools {
		rt := r.Tools[tool]
		if rt == nil {
			rt = &rawTool{}
		}
		tk := at("tools", tool)
		tat := func(key string) toml.Key { return append(slices.Clip(tk), key) }
		var t Tool
		b.action(tat("policy"), rt.Policy, &t.Policy)
		t.Asserted = trust.Hints{
			ReadOnly:    b.boolean(tat("read_only"), rt.ReadOnly),
			Destructive: b.boolean(tat("destructive"), rt.Destructive),
			Idempotent:  b.boolean(tat("idempotent"), rt.Idempotent),
			OpenWorld:   b.boolean(tat("open_world"), rt.OpenWorld),
		}
		t.Labels = b.legs(tat("labels"), rt.Labels)
		t.Rules = b.rules(tat("rules"), rt.Rules, b.home)
		t.Rate = b.rate(tk, rt.Rate, rt.RateAction)
		if s.Tools == nil {
			s.Tools = make(map[string]Tool)
		}
		s.Tools[tool] = t
	}
	if r.OAuth != nil {
		s.OAuth = b.oauth(at("oauth"), r.OAuth)
	}
	b.either(at("elicitation"), r.Elicitation, ElicitDuringCalls, ElicitAnytime, &s.Elicitation)
	if r.Roots.set {
		seen := map[string]bool{}
		s.Roots = []string{} // set, even empty: the server is declared roots
		b.strList(at("roots"), r.Roots, func(i int, e string) string {
			p, err := ParseRoot(e, b.home)
			switch {
			case err != nil:
				b.probs.addAt(at("roots"), i, "%s", err.Error())
			case seen[p]:
				b.probs.addAt(at("roots"), i, "%s is listed twice", p)
			default:
				seen[p] = true
				s.Roots = append(s.Roots, p)
			}
			return e
		})
	}
	if r.Sandbox != nil {
		s.Sandbox = b.sandbox(at("sandbox"), r.Sandbox)
	}
	return s
}

// tilde is p with the home folder (as set or with links resolved) spelled ~.
func (b *builder) tilde(p string) string {
	if b.home == "" {
		return p
	}
	homes := []string{filepath.Clean(b.home)}
	if r, err := filepath.EvalSymlinks(b.home); err == nil && r != homes[0] {
		homes = append(homes, r)
	}
	for _, h := range homes {
		if rel, err := filepath.Rel(h, p); err == nil && beneath(p, h) {
			if rel == "." {
				return "~"
			}
			return "~" + string(filepath.Separator) + rel
		}
	}
	return p
}

// unwritable says why a fenced server may not write real (shown as the config
// spells it), or "": it is, or holds, the home folder, or reaches airlock's own
// config or state folder.
func (b *builder) unwritable(real, shown string) string {
	if strings.ContainsFunc(shown, unicode.IsControl) {
		shown = strconv.Quote(shown)
	}
	resolved := func(d string) []string {
		out := []string{filepath.Clean(d)}
		if r, err := filepath.EvalSymlinks(d); err == nil && r != out[0] {
			out = append(out, r)
		}
		return out
	}
	if b.home != "" && slices.ContainsFunc(resolved(b.home), func(h string) bool { return beneath(h, real) }) {
		return shown + " holds the home folder: a server that may write it may change every file of yours; list the folders it needs"
	}
	for _, kind := range []string{"state", "config", "file"} {
		for _, d := range b.ownDirs[kind] {
			if d != "" && slices.ContainsFunc(resolved(d), func(d string) bool { return beneath(d, real) || kind != "file" && beneath(real, d) }) {
				switch kind {
				case "state":
					return shown + " reaches airlock's state folder (its pins and gateway token): a fenced server may not write it"
				case "config":
					return shown + " reaches airlock's config folder: a fenced server may not write it"
				default:
					return shown + " holds this config file: a fenced server may not write it"
				}
			}
		}
	}
	return ""
}

// beneath says p is dir or inside it.
func beneath(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && filepath.IsAbs(p) && filepath.IsAbs(dir) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// sandbox reads a [servers.NAME.sandbox] table.
func (b *builder) sandbox(k toml.Key, r *rawSandbox) *Sandbox {
	at := func(key string) toml.Key { return append(slices.Clip(k), key) }
	sb := &Sandbox{Network: NetworkNone, Required: true}
	paths := func(key string, v value, dst, written *[]string) {
		seen := map[string]bool{}
		b.strList(at(key), v, func(i int, e string) string {
			p, err := ParseRoot(e, b.home)
			if err != nil {
				b.probs.addAt(at(key), i, "%s", err.Error())
				return e
			}
			// A link is granted as its target (a Landlock rule holds the inode the
			// path opens): record and show the target, so re-pointing the link
			// changes what a snapshot compares.
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				b.probs.addAt(at(key), i, "resolving %q: %v", p, err)
				return e
			}
			shown := e
			if b.tilde(real) != b.tilde(p) {
				shown = e + " → " + b.tilde(real)
			}
			switch msg := b.unwritable(real, shown); {
			case key == "write" && msg != "":
				b.probs.addAt(at(key), i, "%s", msg)
			case seen[real]:
				b.probs.addAt(at(key), i, "%q is listed twice", real)
			default:
				seen[real] = true
				*dst = append(*dst, real)
				*written = append(*written, shown)
			}
			return e
		})
	}
	paths("read", r.Read, &sb.Read, &sb.ReadAsWritten)
	paths("write", r.Write, &sb.Write, &sb.WriteAsWritten)
	b.either(at("network"), r.Network, NetworkNone, NetworkAll, &sb.Network)
	if v := b.boolean(at("required"), r.Required); v != nil {
		sb.Required = *v
	}
	if r.Memory.set {
		if n, ok := parseSize(r.Memory.v); ok {
			sb.MemoryBytes = n
		} else {
			b.probs.add(at("memory"), "want a size such as \"512MiB\" or \"2GiB\", got %s", sizeText(r.Memory.v))
		}
	}
	b.positive(at("cpu_seconds"), r.CPUSeconds, &sb.CPUSeconds)
	b.positive(at("processes"), r.Processes, &sb.Processes)
	return sb
}

// parseSize reads a memory size: a positive integer of bytes, or a string of digits
// followed by KiB, MiB or GiB.
func parseSize(v any) (int64, bool) {
	if n, ok := v.(int64); ok {
		return n, n > 0 && n <= 1<<50
	}
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"KiB", 10}, {"MiB", 20}, {"GiB", 30}} {
		digits, found := strings.CutSuffix(s, u.suffix)
		if !found {
			continue
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || n <= 0 || n > 1<<(50-u.shift) {
			return 0, false
		}
		return n << u.shift, true
	}
	return 0, false
}

func sizeText(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return describe(v)
}

// positive reads a positive integer (at most 1<<40) into dst; false when absent or
// invalid (reported).
func (b *builder) positive(k toml.Key, v value, dst *int64) bool {
	n, ok := setAs[int64](b, k, v, "an integer")
	if !ok {
		return false
	}
	if n <= 0 || n > 1<<40 {
		b.probs.add(k, "want a positive integer up to %d, got %d", int64(1)<<40, n)
		return false
	}
	*dst = n
	return true
}

// oauth reads a [servers.NAME.oauth] table; ${VAR} is expanded in client_secret.
func (b *builder) oauth(k toml.Key, r *rawOAuth) *OAuth {
	at := func(key string) toml.Key { return append(slices.Clip(k), key) }
	o := &OAuth{}
	o.ClientID, _ = b.str(at("client_id"), r.ClientID)
	if s, ok := b.str(at("client_secret"), r.ClientSecret); ok {
		s, msgs := expandVars(s, b.env)
		for _, msg := range msgs {
			b.probs.add(at("client_secret"), "%s", msg)
		}
		if len(msgs) == 0 {
			o.ClientSecret = s
		}
	}
	o.ClientMetadataURL, _ = b.str(at("client_metadata_url"), r.ClientMetadataURL)
	o.Issuer, _ = b.str(at("issuer"), r.Issuer)
	o.Scopes = b.strList(at("scopes"), r.Scopes)
	if n, ok := setAs[int64](b, at("redirect_port"), r.RedirectPort, "an integer"); ok {
		if n < 0 || n > 65535 {
			b.probs.add(at("redirect_port"), "want a port from 0 to 65535, got %d", n)
		} else {
			o.RedirectPort = int(n)
		}
	}
	return o
}

// str returns v's string; ok is false when v is absent or not a string (reported).
func (b *builder) str(k toml.Key, v value) (string, bool) {
	return setAs[string](b, k, v, "a string")
}

// either reads a string that must be one of two words into *dst, which keeps its
// value when the string is absent or another word (reported).
func (b *builder) either(k toml.Key, v value, one, other string, dst *string) {
	w, ok := b.str(k, v)
	switch {
	case !ok:
	case w == one || w == other:
		*dst = w
	default:
		b.probs.add(k, "want %s|%s, got %q", one, other, w)
	}
}

// setAs returns v's value as a T; ok is false when v is absent, or holds another
// type, which is reported: "want " + want + ", got " and what it holds.
func setAs[T any](b *builder, k toml.Key, v value, want string) (T, bool) {
	if !v.set {
		var zero T
		return zero, false
	}
	x, ok := v.v.(T)
	if !ok {
		b.probs.wrongType(k, -1, "want %s, got %s", want, describe(v.v))
	}
	return x, ok
}

// boolean returns v's boolean, nil when absent or not a boolean (reported).
func (b *builder) boolean(k toml.Key, v value) *bool {
	x, ok := setAs[bool](b, k, v, "true or false")
	if !ok {
		return nil
	}
	return &x
}

// strList returns v's strings, reporting a non-array and each non-string element.
// Each string element passes through each func given, with its index in the array.
func (b *builder) strList(k toml.Key, v value, each ...func(int, string) string) []string {
	arr, ok := setAs[[]any](b, k, v, "an array of strings")
	if !ok {
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		if s, ok := e.(string); ok {
			for _, f := range each {
				s = f(i, s)
			}
			out = append(out, s)
		} else {
			b.probs.wrongType(k, i, "want a string, got %s", describe(e))
		}
	}
	return out
}

// strMap returns v's table of strings with ${VAR} expanded in the values, reporting
// a non-table, non-string values, malformed references and unset variables.
func (b *builder) strMap(k toml.Key, v value) map[string]string {
	m, ok := setAs[map[string]any](b, k, v, "a table of strings")
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		ek := append(slices.Clip(k), name)
		s, ok := m[name].(string)
		if !ok {
			b.probs.wrongType(ek, -1, "want a string, got %s", describe(m[name]))
			continue
		}
		s, msgs := expandVars(s, b.env)
		for _, msg := range msgs {
			b.probs.add(ek, "%s", msg)
		}
		if len(msgs) == 0 {
			out[name] = s
		}
	}
	return out
}

// action parses an allow|ask|deny word into *dst, which keeps its value on error.
func (b *builder) action(k toml.Key, v value, dst *trust.Action) {
	s, ok := b.str(k, v)
	if !ok {
		return
	}
	a, ok := trust.ParseAction(s)
	if !ok {
		b.probs.add(k, "want allow|ask|deny, got %q", s)
		return
	}
	*dst = a
}

// duration parses a Go duration such as "15s" into *dst, which keeps its value on
// error. Whether it is positive is for Validate.
func (b *builder) duration(k toml.Key, v value, dst *time.Duration) {
	s, ok := setAs[string](b, k, v, `a duration such as "15s"`)
	if !ok {
		return
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		b.probs.add(k, "invalid duration %q", s)
		return
	}
	*dst = d
}

// legs reads a labels array, reporting words that are not legs.
func (b *builder) legs(k toml.Key, v value) []trust.Leg {
	arr, ok := setAs[[]any](b, k, v, "an array of strings")
	if !ok {
		return nil
	}
	out := make([]trust.Leg, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			b.probs.wrongType(k, i, "want a string, got %s", describe(e))
			continue
		}
		l, ok := trust.ParseLeg(s)
		if !ok {
			b.probs.addAt(k, i, "%s", legWant(s))
			continue
		}
		out = append(out, l)
	}
	return out
}

// expandVars replaces each ${NAME} in s with the variable's value, and each
// ${NAME:-default} with the value, or default when the variable is unset or empty
// (Claude Code's convention; default ends at the first "}"). It returns one message per
// unset variable or malformed reference; the messages name the variable but never
// quote s, which may be a secret. A "$" not followed by "{" is kept as it is.
func expandVars(s string, env func(string) (string, bool)) (string, []string) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var (
		b    strings.Builder
		msgs []string
	)
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			msgs = appendNew(msgs, malformedRef)
			break
		}
		ref := s[i+2 : i+2+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		switch val, ok := env(name); {
		case !validVarName(name):
			msgs = appendNew(msgs, malformedRef)
		case hasDef && (!ok || val == ""):
			b.WriteString(def)
		case ok:
			b.WriteString(val)
		default:
			msgs = appendNew(msgs, fmt.Sprintf("environment variable %s is not set", name))
		}
		s = s[i+2+end+1:]
	}
	return b.String(), msgs
}

const malformedRef = "malformed ${...} reference: want ${NAME} or ${NAME:-default}, NAME made of letters, digits and _, not starting with a digit"

func validVarName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func appendNew(msgs []string, msg string) []string {
	if slices.Contains(msgs, msg) {
		return msgs
	}
	return append(msgs, msg)
}
