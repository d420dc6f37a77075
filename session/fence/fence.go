// Package fence starts a stdio server inside a sandbox (a fence) and says what the
// sandbox enforces. On Linux airlock re-executes itself as the launcher (the hidden
// subcommand LauncherArg): the launcher is born in a new network namespace when the
// server may not reach the network, closes the descriptors it inherited, applies
// its rlimits, Landlock rules and no_new_privs, reports what it applied over a pipe
// and then executes the server. On macOS the server runs under a Seatbelt profile
// (sandbox-exec); elsewhere a fence is refused. docs/platforms.md says what each
// platform enforces and what it does not.
package fence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// LauncherArg is the hidden subcommand that makes airlock the launcher: argv is
// [airlock, LauncherArg, spec as JSON]. It is never a shell.
const LauncherArg = "__fence-launch"

// Sandbox is what the config asks for one server.
type Sandbox struct {
	// Read and Write are absolute paths beyond the command's own (config order).
	Read, Write []string
	// Network is "none" or "all".
	Network string
	// Required says a fence that cannot be applied in full keeps the server from
	// starting.
	Required bool
	// MemoryBytes, CPUSeconds and Processes are limits (0: none).
	MemoryBytes, CPUSeconds, Processes int64
}

// Rule is one path the launcher grants, read-only or writable. An Optional rule
// whose path is missing is skipped; any other missing path fails the fence.
type Rule struct {
	Path     string `json:"path"`
	Write    bool   `json:"write,omitempty"`
	Optional bool   `json:"optional,omitempty"`
}

// Spec is what the launcher is told, as JSON in its argv (never environment
// values: those reach the launcher as its own environment and pass to the server
// unchanged).
type Spec struct {
	Path     string   `json:"path"`
	Argv     []string `json:"argv"`
	Rules    []Rule   `json:"rules"`
	Network  string   `json:"network"`
	Required bool     `json:"required"`
	// ParentNetNS and ParentUserNS are the inode numbers of airlock's own network
	// and user namespaces: the launcher checks that it is in a new network
	// namespace by comparing.
	ParentNetNS  uint64 `json:"parent_netns,omitempty"`
	ParentUserNS uint64 `json:"parent_userns,omitempty"`
	MemoryBytes  int64  `json:"memory,omitempty"`
	CPUSeconds   int64  `json:"cpu,omitempty"`
	Processes    int64  `json:"processes,omitempty"`
}

// Report is what the launcher applied, as it says over the report pipe before it
// executes the server.
type Report struct {
	// Applied says every part asked for was applied; Reason says why not.
	Applied bool   `json:"applied"`
	Reason  string `json:"reason,omitempty"`
	// ABI is the Landlock ABI version used (0: none); Rules counts the path rules.
	ABI   int `json:"abi"`
	Rules int `json:"rules"`
	// TCP says Landlock denies TCP connect and bind; Scoped that signals and
	// abstract unix sockets to processes outside the fence are denied.
	TCP    bool `json:"tcp,omitempty"`
	Scoped bool `json:"scoped,omitempty"`
	// NetNS says the server runs in a new, empty network namespace; UserNS that a
	// user namespace was made for it (an unprivileged airlock).
	NetNS      bool `json:"netns,omitempty"`
	UserNS     bool `json:"userns,omitempty"`
	NoNewPrivs bool `json:"no_new_privs,omitempty"`
	// NoCaps says the server holds no capability (and, as uid 0, has an empty
	// bounding set).
	NoCaps bool `json:"no_caps,omitempty"`
	// Keyring says the server has a new, empty session keyring.
	Keyring bool `json:"keyring,omitempty"`
	// FDsClosed says every inherited descriptor above stderr is closed on exec.
	FDsClosed bool     `json:"fds_closed,omitempty"`
	Limits    []string `json:"limits,omitempty"`
	// Mechanism names what enforced the fence when it is not Landlock ("Seatbelt").
	Mechanism string `json:"mechanism,omitempty"`
	// ExecError is set when executing the server failed after the report.
	ExecError string `json:"exec_error,omitempty"`
}

// Detail is the report as one sentence for the server's fence line.
func (r Report) Detail() string {
	var parts []string
	if r.Mechanism != "" {
		parts = append(parts, r.Mechanism)
	}
	if r.ABI > 0 {
		s := fmt.Sprintf("Landlock ABI %d (%d path rules", r.ABI, r.Rules)
		if r.TCP {
			s += ", TCP denied"
		}
		if r.Scoped {
			s += ", signals and abstract sockets scoped"
		}
		parts = append(parts, s+")")
	}
	switch {
	case r.NetNS && r.UserNS:
		parts = append(parts, "network namespace (in a user namespace)")
	case r.NetNS:
		parts = append(parts, "network namespace")
	case r.UserNS:
		parts = append(parts, "user namespace")
	}
	if r.NoNewPrivs {
		parts = append(parts, "no_new_privs")
	}
	if r.NoCaps {
		parts = append(parts, "no capabilities")
	}
	if r.Keyring {
		parts = append(parts, "own session keyring")
	}
	if r.FDsClosed {
		parts = append(parts, "inherited descriptors closed")
	}
	parts = append(parts, r.Limits...)
	out := strings.Join(parts, ", ")
	if !r.Applied {
		if out != "" {
			return "unfenced: " + r.Reason + " (applied: " + out + ")"
		}
		return "unfenced: " + r.Reason
	}
	return out
}

// ReadReport parses what the launcher wrote on the report pipe: one JSON line,
// then, only if executing the server failed, a second line with ExecError. A
// missing, partial or unparseable report is an error: the fence is not known to
// be applied, so the server must be treated as not started.
func ReadReport(b []byte) (Report, error) {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(b) == 0 || len(lines) == 0 || len(lines[0]) == 0 {
		return Report{}, errors.New("the sandbox launcher sent no report")
	}
	var r Report
	if err := json.Unmarshal(lines[0], &r); err != nil {
		return Report{}, fmt.Errorf("the sandbox launcher's report is damaged: %v", err)
	}
	if !bytes.HasSuffix(b, []byte("\n")) {
		return Report{}, errors.New("the sandbox launcher's report is cut short")
	}
	if len(lines) > 1 {
		var e Report
		if err := json.Unmarshal(lines[1], &e); err != nil || e.ExecError == "" || len(lines) > 2 {
			return Report{}, errors.New("the sandbox launcher's report has trailing data")
		}
		r.ExecError = e.ExecError
	}
	return r, nil
}

// SystemRead are the folders and files every fenced command may read (and
// execute): the system's programs and libraries, its certificate stores and the
// few files in /etc that name lookups and time zones read. Missing ones are
// skipped. /etc as a whole is not listed: it holds secrets on many machines.
var SystemRead = []string{
	"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
	"/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/ca-certificates.conf",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
	"/etc/localtime", "/etc/timezone", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
	"/etc/hosts", "/etc/host.conf", "/etc/resolv.conf", "/etc/gai.conf", "/etc/services", "/etc/protocols",
	"/etc/mime.types", "/etc/os-release",
	"/dev/urandom", "/dev/random",
	// A process's own /proc entries (the launcher's pid is the server's), and the
	// system-wide counters that runtimes size themselves by. Not /proc as a whole:
	// other processes' command lines are readable there.
	"/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/loadavg", "/proc/uptime",
	"/proc/version", "/proc/filesystems", "/proc/sys/kernel/osrelease", "/proc/sys/vm/overcommit_memory",
	"/sys/devices/system/cpu", "/sys/fs/cgroup",
}

// SystemWrite are the devices every fenced command may write. /dev/tty is not
// one: a server writing there would reach the person's terminal past airlock.
var SystemWrite = []string{"/dev/null", "/dev/zero", "/dev/full"}

// interpreters are the programs whose install folder (the parent of their bin
// folder) holds what they load: Node's lib/node_modules, Python's lib.
var interpreters = []string{"node", "nodejs", "bun", "deno", "python", "python3", "ruby", "perl", "php"}

// OwnPaths returns what running exe needs to read beyond SystemRead: exe itself
// (links resolved), the interpreter of its "#!" line (through env and the PATH of
// env), an interpreter's install folder, and, for a script inside a node_modules
// folder, the outermost node_modules folder (its packages' dependencies).
func OwnPaths(exe string, env []string) ([]string, error) {
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return nil, fmt.Errorf("resolving the command %s: %w", exe, err)
	}
	add(real)
	nodeModules(real, add)
	interp, err := shebang(real, env)
	if err != nil {
		return nil, err
	}
	prog := real
	if interp != "" {
		ri, err := filepath.EvalSymlinks(interp)
		if err != nil {
			return nil, fmt.Errorf("resolving the interpreter %s of %s: %w", interp, exe, err)
		}
		add(ri)
		prog = ri
	}
	if base := filepath.Base(prog); slices.ContainsFunc(interpreters, func(n string) bool {
		return base == n || strings.HasPrefix(base, n+".") || strings.HasPrefix(base, n+"3.")
	}) {
		if bin := filepath.Dir(prog); filepath.Base(bin) == "bin" {
			if root := filepath.Dir(bin); root != "/usr" && root != "/" && root != "/usr/local" {
				// An install folder in the home folder (~/.local) or holding it
				// (~ itself) would grant the person's files: only its lib then.
				if !nearHome(root, env) {
					add(root)
				} else if lib := filepath.Join(root, "lib"); !holdsHome(lib, env) {
					if fi, err := os.Stat(lib); err == nil && fi.IsDir() {
						add(lib)
					}
				}
			}
		}
	}
	return out, nil
}

// homes are the home folders a grant must not reach: env's HOME and airlock's
// own, links resolved.
func homes(env []string) []string {
	var out []string
	add := func(h string) {
		if h == "" || !filepath.IsAbs(h) {
			return
		}
		out = append(out, filepath.Clean(h))
		if r, err := filepath.EvalSymlinks(h); err == nil {
			out = append(out, r)
		}
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			add(v)
		}
	}
	if h, err := os.UserHomeDir(); err == nil {
		add(h)
	}
	return out
}

// nearHome says p is a home folder, inside one or holds one.
func nearHome(p string, env []string) bool {
	return slices.ContainsFunc(homes(env), func(h string) bool { return within(p, h) || within(h, p) })
}

// holdsHome says p is a home folder or holds one.
func holdsHome(p string, env []string) bool {
	return slices.ContainsFunc(homes(env), func(h string) bool { return within(h, p) })
}

// within says p is dir or beneath it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// nodeModules adds the outermost node_modules folder on p's path.
func nodeModules(p string, add func(string)) {
	parts := strings.Split(filepath.ToSlash(p), "/")
	for i, s := range parts {
		if s == "node_modules" && i > 0 {
			add(filepath.FromSlash(strings.Join(parts[:i+1], "/")))
			return
		}
	}
}

// shebang returns the interpreter named by p's "#!" line ("" when p is not a
// script), looking up the program after /usr/bin/env in env's PATH.
func shebang(p string, env []string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("reading the command %s: %w", p, err)
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := f.Read(buf)
	line := buf[:n]
	if !bytes.HasPrefix(line, []byte("#!")) {
		return "", nil
	}
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(string(line[2:]))
	if len(fields) == 0 {
		return "", fmt.Errorf("the command %s has an empty #! line", p)
	}
	interp := fields[0]
	if filepath.Base(interp) != "env" {
		return interp, nil
	}
	for _, f := range fields[1:] {
		if strings.HasPrefix(f, "-") || strings.Contains(f, "=") {
			continue
		}
		return lookPath(f, env)
	}
	return "", fmt.Errorf("the command %s runs env without a program", p)
}

// lookPath finds name in env's PATH.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("the interpreter %q is not on the server's PATH", name)
}

// Rules is every path rule for a command: its own files, the system's, the
// private temporary folder and the config's read and write paths. Config paths
// that are links are granted as their targets (a Landlock rule is on the inode
// the path opens).
func Rules(own []string, tmp string, sb Sandbox) []Rule {
	var rules []Rule
	for _, p := range own {
		rules = append(rules, Rule{Path: p})
	}
	for _, p := range SystemRead {
		rules = append(rules, Rule{Path: p, Optional: true})
	}
	for _, p := range SystemWrite {
		rules = append(rules, Rule{Path: p, Write: true, Optional: true})
	}
	if tmp != "" {
		rules = append(rules, Rule{Path: tmp, Write: true})
	}
	for _, p := range sb.Read {
		rules = append(rules, Rule{Path: p})
	}
	for _, p := range sb.Write {
		rules = append(rules, Rule{Path: p, Write: true})
	}
	return rules
}

// offline are the variables that make package runners fail at once, instead of
// retrying for minutes, when a server fenced with network = "none" starts with
// one (npx, uvx): there is no network to retry. A value the config sets wins.
var offline = []string{"npm_config_offline=true", "UV_OFFLINE=1", "PIP_NO_INDEX=1"}

// fencedEnv is env with TMPDIR set to tmp and, with network = "none", the
// offline variables not already set.
func fencedEnv(env []string, tmp, network string) []string {
	out := make([]string, 0, len(env)+1+len(offline))
	set := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		set[strings.ToLower(k)] = true
		if k != "TMPDIR" {
			out = append(out, kv)
		}
	}
	out = append(out, "TMPDIR="+tmp)
	if network == "none" {
		for _, kv := range offline {
			if k, _, _ := strings.Cut(kv, "="); !set[strings.ToLower(k)] {
				out = append(out, kv)
			}
		}
	}
	return out
}
