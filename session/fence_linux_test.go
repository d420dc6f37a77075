package session_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// landlockABI skips the test, saying why, where the kernel cannot fence.
func landlockABI(t *testing.T) int {
	t.Helper()
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 || v < 3 {
		t.Skipf("this kernel cannot fence a server: Landlock ABI %d (%v); ABI 3 (Linux 6.2) is needed", int(v), e)
	}
	_ = unsafe.Sizeof(0)
	return int(v)
}

// fenceHome is a home folder with a secret in .ssh, a project to read, an out
// folder to write, and a link inside the project that points at .ssh.
type fenceHome struct {
	home, secret, project, out, link string
}

func newFenceHome(t *testing.T) fenceHome {
	t.Helper()
	h := fenceHome{home: t.TempDir()}
	h.project = filepath.Join(h.home, "project")
	h.out = filepath.Join(h.project, "out")
	for _, d := range []string{filepath.Join(h.home, ".ssh"), h.project, h.out} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	h.secret = filepath.Join(h.home, ".ssh", "id_ed25519")
	for _, f := range []string{h.secret, filepath.Join(h.project, "README")} {
		if err := os.WriteFile(f, []byte("content\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h.link = filepath.Join(h.project, "keys")
	if err := os.Symlink(filepath.Join(h.home, ".ssh"), h.link); err != nil {
		t.Fatal(err)
	}
	return h
}

func proberServer(t *testing.T, h fenceHome, network string) config.Server {
	s := sessiontest.TestServer(t, "fs", "prober", trust.Trusted)
	s.Env["HOME"] = h.home
	s.Sandbox = &config.Sandbox{Read: []string{h.project}, Write: []string{h.out},
		ReadAsWritten: []string{"~/project"}, WriteAsWritten: []string{"~/project/out"}, Network: network, Required: true}
	return s
}

func probeCall(t *testing.T, m *session.Manager, a probeArgs) string {
	t.Helper()
	b, _ := json.Marshal(a)
	out, err := m.Call(context.Background(), model.CallRequest{Server: "fs", Tool: "probe", Args: b})
	if err != nil {
		t.Fatalf("probe %+v: %v", a, err)
	}
	return sessiontest.TextOf(out.Result)
}

// A fenced server reaches its own paths and nothing else: not ~/.ssh (directly,
// through a link under a read path, through "..", through /proc/self/root, through
// a child process or through a descriptor airlock leaked to it), no write outside
// write, no TCP or UDP even to 127.0.0.1, no ptrace or signal of airlock. The
// launcher's report is what ServerInfo.Fence says.
func TestFencedServerReachesOnlyItsPaths(t *testing.T) {
	abi := landlockABI(t)
	h := newFenceHome(t)

	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	go func() {
		buf := make([]byte, 64)
		for {
			n, from, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = udp.WriteTo(buf[:n], from)
		}
	}()

	// A descriptor to the secret without close-on-exec, as a careless parent would
	// leave it: the launcher must close it before the server runs.
	leak, err := syscall.Open(h.secret, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(leak)

	m := sessiontest.Start(t, sessiontest.NewConfig(proberServer(t, h, config.NetworkNone)), session.Options{})
	sv := sessiontest.MustServer(t, m, "fs", model.StatusReady)
	f := sv.Fence
	if !f.Requested || !f.Applied || f.Network != "none" || !f.NoNetwork() {
		t.Fatalf("Fence = %+v, want requested, applied, network none", f)
	}
	if strings.Join(f.Read, ",") != "~/project" || strings.Join(f.Write, ",") != "~/project/out" {
		t.Errorf("Fence read/write = %q %q, want as written", f.Read, f.Write)
	}
	for _, want := range []string{"Landlock ABI " + strconv.Itoa(abi), "network namespace", "no_new_privs", "inherited descriptors closed"} {
		if !strings.Contains(f.Detail, want) {
			t.Errorf("Fence.Detail = %q, want it to say %q", f.Detail, want)
		}
	}

	allowed := []probeArgs{
		{Op: "open", Path: filepath.Join(h.project, "README")},
		{Op: "write", Path: filepath.Join(h.out, "result.txt")},
		{Op: "open", Path: "/etc/passwd"},
		{Op: "write", Path: "/dev/null"},
		{Op: "run", Path: "/bin/true"},
	}
	for _, a := range allowed {
		if got := probeCall(t, m, a); !strings.HasPrefix(got, "ok") {
			t.Errorf("probe %+v = %q, want ok", a, got)
		}
	}
	// The temporary folder the server is given is its own and writable.
	if got := probeCall(t, m, probeArgs{Op: "run", Path: "/bin/sh", Args: []string{"-c", `echo x > "$TMPDIR/t" && cat "$TMPDIR/t"`}}); got != "ok: x\n" {
		t.Errorf("writing $TMPDIR = %q, want ok: x", got)
	}

	denied := []probeArgs{
		{Op: "open", Path: h.secret},
		{Op: "open", Path: filepath.Join(h.link, "id_ed25519")},
		{Op: "open", Path: filepath.Join(h.project, "..", ".ssh", "id_ed25519")},
		{Op: "open", Path: "/proc/self/root" + h.secret},
		{Op: "open", Path: "/proc/1/environ"},
		{Op: "write", Path: filepath.Join(h.project, "new.txt")},
		{Op: "write", Path: filepath.Join(os.TempDir(), "airlock-fence-escape")},
		{Op: "write", Path: "/dev/tty"},
		{Op: "run", Path: "/bin/cat", Args: []string{h.secret}},
		{Op: "run", Path: "/bin/sh", Args: []string{"-c", "ln -s " + h.secret + " " + h.out + "/l && cat " + h.out + "/l"}},
		{Op: "run", Path: "/bin/sh", Args: []string{"-c", "ln " + h.secret + " " + h.out + "/hard"}},
		{Op: "fd", N: leak},
		{Op: "dial", Network: "tcp", Address: tcp.Addr().String()},
		{Op: "dial", Network: "udp", Address: udp.LocalAddr().String()},
		{Op: "ptrace", N: os.Getpid()},
	}
	if abi >= 6 {
		denied = append(denied, probeArgs{Op: "signal", N: os.Getpid()})
	}
	for _, a := range denied {
		got := probeCall(t, m, a)
		if !strings.HasPrefix(got, "error") {
			t.Errorf("probe %+v = %q, want an error", a, got)
		}
		t.Logf("%s %s%s: %s", a.Op, a.Path, a.Address, got)
	}
	if _, err := os.Stat(filepath.Join(os.TempDir(), "airlock-fence-escape")); err == nil {
		t.Errorf("the fenced server wrote outside its write paths")
	}
}

// network = "all": TCP to 127.0.0.1 works, files stay fenced.
func TestFencedServerNetworkAll(t *testing.T) {
	landlockABI(t)
	h := newFenceHome(t)
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	go func() {
		if c, err := tcp.Accept(); err == nil {
			c.Close()
		}
	}()
	m := sessiontest.Start(t, sessiontest.NewConfig(proberServer(t, h, config.NetworkAll)), session.Options{})
	sv := sessiontest.MustServer(t, m, "fs", model.StatusReady)
	if !sv.Fence.Applied || sv.Fence.NoNetwork() || strings.Contains(sv.Fence.Detail, "network namespace") {
		t.Errorf("Fence = %+v, want applied without a network namespace", sv.Fence)
	}
	if !strings.Contains(sv.Fence.Detail, "; the command's own files: /") {
		t.Errorf("Detail = %q, want the command's own files", sv.Fence.Detail)
	}
	if got := probeCall(t, m, probeArgs{Op: "dial", Network: "tcp", Address: tcp.Addr().String()}); got != "ok" {
		t.Errorf("TCP with network = all: %q, want ok", got)
	}
	if got := probeCall(t, m, probeArgs{Op: "open", Path: h.secret}); !strings.HasPrefix(got, "error") {
		t.Errorf("~/.ssh with network = all: %q, want an error", got)
	}
}

// A fence that cannot be applied in full keeps a required server from starting,
// with the reason; with required = false the server starts and says it is unfenced.
func TestFenceNotAppliedFailsClosed(t *testing.T) {
	landlockABI(t)
	h := newFenceHome(t)
	gone := filepath.Join(h.home, "gone")
	if err := os.Mkdir(gone, 0o700); err != nil {
		t.Fatal(err)
	}
	s := proberServer(t, h, config.NetworkNone)
	s.Sandbox.Read = append(s.Sandbox.Read, gone)
	lax := proberServer(t, h, config.NetworkNone)
	lax.Name = "lax"
	lax.Sandbox.Read = append(lax.Sandbox.Read, gone)
	lax.Sandbox.Required = false
	if err := os.Remove(gone); err != nil { // after the config was loaded
		t.Fatal(err)
	}
	m := sessiontest.Start(t, sessiontest.NewConfig(s, lax), session.Options{})
	sv := sessiontest.MustServer(t, m, "fs", model.StatusFailed)
	if sv.Err == nil || !strings.Contains(sv.Err.Error(), "sandbox requested but "+gone+" cannot be granted") {
		t.Errorf("Err = %v, want the reason the fence could not be applied", sv.Err)
	}
	if sv.Fence.Applied || !sv.Fence.Requested || !strings.HasPrefix(sv.Fence.Detail, "unfenced: ") {
		t.Errorf("failed server's Fence = %+v, want requested, not applied, unfenced", sv.Fence)
	}
	lv := sessiontest.MustServer(t, m, "lax", model.StatusReady)
	if lv.Fence.Applied || !strings.Contains(lv.Fence.Detail, "unfenced: sandbox requested but "+gone) {
		t.Errorf("not-required server's Fence = %+v, want unfenced with the reason", lv.Fence)
	}
}

// The npm filesystem server runs fenced to its root: it reads and writes there,
// and the fence (not the server's own check) is what keeps it from anything else.
func TestFencedNPMFilesystemServer(t *testing.T) {
	landlockABI(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "note.txt"), []byte("fenced hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := sessiontest.NPMServer(t, "fs", "mcp-server-filesystem", trust.Trusted, root)
	s.Env = map[string]string{"HOME": t.TempDir()}
	s.CallTimeout = 10 * time.Second
	s.Tools = map[string]config.Tool{"write_file": {Policy: trust.Allow}, "read_text_file": {Policy: trust.Allow}}
	s.Sandbox = &config.Sandbox{Write: []string{root}, WriteAsWritten: []string{root}, Network: config.NetworkNone, Required: true}
	memDir := t.TempDir()
	mem := sessiontest.NPMServer(t, "memory", "mcp-server-memory", trust.Trusted)
	mem.Env = map[string]string{"HOME": t.TempDir(), "MEMORY_FILE_PATH": filepath.Join(memDir, "memory.jsonl")}
	mem.Tools = map[string]config.Tool{"create_entities": {Policy: trust.Allow}}
	mem.Sandbox = &config.Sandbox{Write: []string{memDir}, Network: config.NetworkNone, Required: true}
	m := sessiontest.Start(t, sessiontest.NewConfig(s, mem), session.Options{})
	for _, n := range []string{"fs", "memory"} {
		if sv := sessiontest.MustServer(t, m, n, model.StatusReady); !sv.Fence.Applied {
			t.Fatalf("%s: Fence = %+v, want applied", n, sv.Fence)
		}
	}
	ctx := context.Background()
	out, err := m.Call(ctx, model.CallRequest{Server: "memory", Tool: "create_entities",
		Args: sessiontest.Args(`{"entities":[{"name":"fence","entityType":"test","observations":["kept"]}]}`)})
	if err != nil || out.Result.IsError {
		t.Fatalf("create_entities under the fence: %v %+v; stderr %q", err, out, m.Stderr("memory"))
	}
	if b, err := os.ReadFile(filepath.Join(memDir, "memory.jsonl")); err != nil || !strings.Contains(string(b), "fence") {
		t.Errorf("memory file: %v %q", err, b)
	}
	out, err = m.Call(ctx, model.CallRequest{Server: "fs", Tool: "read_text_file", Args: sessiontest.Args(`{"path":` + strconv.Quote(filepath.Join(root, "note.txt")) + `}`)})
	if err != nil {
		t.Fatalf("read_text_file under the fence: %v; stderr %q", err, m.Stderr("fs"))
	}
	if !strings.Contains(sessiontest.TextOf(out.Result), "fenced hello") {
		t.Fatalf("read_text_file under the fence: %q", sessiontest.TextOf(out.Result))
	}
	out, err = m.Call(ctx, model.CallRequest{Server: "fs", Tool: "write_file", Args: sessiontest.Args(`{"path":` + strconv.Quote(filepath.Join(root, "new.txt")) + `,"content":"x"}`)})
	if err != nil || out.Result.IsError {
		t.Fatalf("write_file under the fence: %v %+v", err, out)
	}
}

// A server started with npx and network = "none" cannot download its package: it
// fails at once with airlock's explanation, not a hang until the connect timeout.
func TestFencedNPXFailsWithExplanation(t *testing.T) {
	landlockABI(t)
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("npx is not installed")
	}
	s := config.Server{Name: "npx", Transport: config.TransportStdio, Command: npx,
		Args: []string{"-y", "@modelcontextprotocol/server-everything"}, Env: map[string]string{"HOME": t.TempDir()},
		ConnectTimeout: 2 * time.Minute, CallTimeout: time.Minute,
		Sandbox: &config.Sandbox{Network: config.NetworkNone, Required: true}}
	m := sessiontest.Start(t, sessiontest.NewConfig(s), session.Options{})
	sv := sessiontest.MustServer(t, m, "npx", model.StatusFailed)
	t.Logf("npx fenced: %v", sv.Err)
	if sv.Err == nil || !strings.Contains(sv.Err.Error(), `fenced with network = "none"`) ||
		strings.Contains(sv.Err.Error(), "connect timeout") {
		t.Errorf("Err = %v, want airlock's explanation of the fence", sv.Err)
	}
}

// Limits: memory is RLIMIT_DATA (not RLIMIT_AS, which stops V8), cpu RLIMIT_CPU,
// processes RLIMIT_NPROC; the server's /proc/self/limits shows them and the report
// names them.
func TestFencedServerLimits(t *testing.T) {
	landlockABI(t)
	h := newFenceHome(t)
	s := proberServer(t, h, config.NetworkNone)
	s.Sandbox.MemoryBytes, s.Sandbox.CPUSeconds, s.Sandbox.Processes = 8<<30, 600, 4096
	m := sessiontest.Start(t, sessiontest.NewConfig(s), session.Options{})
	sv := sessiontest.MustServer(t, m, "fs", model.StatusReady)
	for _, want := range []string{"memory (RLIMIT_DATA, bytes) 8589934592", "cpu (RLIMIT_CPU, seconds) 600", "processes (RLIMIT_NPROC, per user) 4096"} {
		if !strings.Contains(sv.Fence.Detail, want) {
			t.Errorf("Fence.Detail = %q, want %q", sv.Fence.Detail, want)
		}
	}
	limits := probeCall(t, m, probeArgs{Op: "cat", Path: "/proc/self/limits"})
	for _, re := range []string{`Max data size\s+8589934592\s+8589934592`, `Max cpu time\s+600\s+600`, `Max processes\s+4096\s+4096`} {
		if !regexp.MustCompile(re).MatchString(limits) {
			t.Errorf("/proc/self/limits lacks %s:\n%s", re, limits)
		}
	}
}
