package fence

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probe is what the test binary, run fenced as the server
// (AIRLOCK_FENCE_TEST_PROBE=1), finds it can do. Each field is "ok" or the error.
type probe struct {
	CapEff, CapBnd, CapAmb string
	Mknod                  string // a character device node in TMPDIR
	Packet                 string // an AF_PACKET raw socket
	UTS, IPC               uint64 // namespace inodes
	Session, Pid           int
	KeyRead                string // reading the key airlock added to its session keyring
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func runProbe() int {
	var p probe
	status, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(l, ":")
		switch k {
		case "CapEff":
			p.CapEff = strings.TrimSpace(v)
		case "CapBnd":
			p.CapBnd = strings.TrimSpace(v)
		case "CapAmb":
			p.CapAmb = strings.TrimSpace(v)
		}
	}
	p.Mknod = errString(unix.Mknod(filepath.Join(os.Getenv("TMPDIR"), "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))))
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0x0300)
	if err == nil {
		unix.Close(fd)
	}
	p.Packet = errString(err)
	p.UTS, _ = nsInode("uts")
	p.IPC, _ = nsInode("ipc")
	p.Pid = os.Getpid()
	p.Session, _ = unix.Getsid(0)
	id, _ := strconv.Atoi(os.Getenv("AIRLOCK_TEST_KEY"))
	buf := make([]byte, 64)
	p.KeyRead = "ok"
	if _, _, e := unix.Syscall6(unix.SYS_KEYCTL, unix.KEYCTL_READ, uintptr(id), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0); e != 0 {
		p.KeyRead = e.Error()
	}
	b, _ := json.Marshal(p)
	os.Stdout.Write(append(b, '\n'))
	return 0
}

func init() {
	if os.Getenv("AIRLOCK_FENCE_TEST_PROBE") == "1" && (len(os.Args) < 2 || os.Args[1] != LauncherArg) {
		os.Exit(runProbe())
	}
}

func needFence(t *testing.T) {
	t.Helper()
	if v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION); e != 0 || v < minABI {
		t.Skipf("this kernel cannot fence: Landlock ABI %d (%v)", int(v), e)
	}
}

// fencedProbe runs the test binary fenced as the server, with the serial of the
// key it tries to read, and returns what it found.
func fencedProbe(t *testing.T, network string, key int) (probe, Report) {
	t.Helper()
	self, _ := os.Executable()
	cmd := exec.Command(self)
	cmd.Env = []string{"AIRLOCK_FENCE_TEST_PROBE=1", "PATH=/usr/bin:/bin"}
	cmd.Env = append(cmd.Env, "AIRLOCK_TEST_KEY="+strconv.Itoa(key))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	l, err := Wrap(cmd, Sandbox{Network: network, Required: true}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(l.StartFailed(cmd, err))
	}
	l.Started()
	rep, err := l.Wait(time.Now().Add(30 * time.Second))
	werr := cmd.Wait()
	l.Cleanup()
	if err != nil || werr != nil || !rep.Applied {
		t.Fatalf("fenced probe: report %+v, %v, wait %v: %s %s", rep, err, werr, out.String(), errb.String())
	}
	var p probe
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatalf("probe output %q: %v", out.String(), err)
	}
	t.Logf("report %s; probe %+v", rep.Detail(), p)
	return p, rep
}

// An airlock running as root fences a server that holds no capability: it can
// make no device node (a terminal to inject keystrokes into), open no raw packet
// socket (to sniff the gateway's tokens on lo), change no host name, and has no
// controlling terminal; with either network setting.
func TestRootFenceDropsCapabilities(t *testing.T) {
	needFence(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: the capabilities of a root airlock are what is tested")
	}
	uts, _ := nsInode("uts")
	ipc, _ := nsInode("ipc")
	for _, network := range []string{"none", "all"} {
		t.Run(network, func(t *testing.T) {
			p, _ := fencedProbe(t, network, 0)
			zero := "0000000000000000"
			if p.CapEff != zero || p.CapBnd != zero || p.CapAmb != zero {
				t.Errorf("capabilities: effective %s, bounding %s, ambient %s; want none", p.CapEff, p.CapBnd, p.CapAmb)
			}
			if p.Mknod == "ok" {
				t.Errorf("the fenced server made a device node in its TMPDIR")
			}
			if p.Packet != unix.EPERM.Error() {
				t.Errorf("AF_PACKET socket: %s, want %s", p.Packet, unix.EPERM)
			}
			if p.UTS == uts || p.IPC == ipc {
				t.Errorf("the fenced server shares airlock's UTS (%v) or IPC (%v) namespace", p.UTS == uts, p.IPC == ipc)
			}
			if p.Session != p.Pid {
				t.Errorf("the server is in session %d, not its own (pid %d)", p.Session, p.Pid)
			}
		})
	}
}

// No writable folder lets the server make a device node or use a device's
// ioctls; only SystemWrite's devices keep their ioctls.
func TestWriteRulesNeverMakeDevices(t *testing.T) {
	fs := handledFS(7)
	for _, rule := range []Rule{{Path: "/tmp/x", Write: true}, {Path: "/tmp/x"}, {Path: "/dev/null", Write: true}} {
		a := ruleAccess(rule, fs)
		if a&(unix.LANDLOCK_ACCESS_FS_MAKE_CHAR|unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK) != 0 {
			t.Errorf("%+v grants making device nodes (%#x)", rule, a)
		}
		if ioctl := a&unix.LANDLOCK_ACCESS_FS_IOCTL_DEV != 0; ioctl != (rule.Path == "/dev/null") {
			t.Errorf("%+v: device ioctl granted = %v", rule, ioctl)
		}
	}
	if a := ruleAccess(Rule{Path: "/tmp/x", Write: true}, fs); a&unix.LANDLOCK_ACCESS_FS_WRITE_FILE == 0 || a&unix.LANDLOCK_ACCESS_FS_MAKE_REG == 0 {
		t.Errorf("a write rule lost file writing: %#x", a)
	}
}

// The server cannot read a key in airlock's session keyring: the launcher joins
// a new, anonymous session keyring.
func TestFencedServerCannotReadSessionKeyring(t *testing.T) {
	needFence(t)
	for _, network := range []string{"none", "all"} {
		t.Run(network, func(t *testing.T) {
			// Keyrings are per thread: the key is added on, and the child forked
			// from, this one.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			sessionRing := int32(unix.KEY_SPEC_SESSION_KEYRING)
			desc, payload := []byte("airlock-fence-test\x00"), []byte("secret")
			id, _, e := unix.Syscall6(unix.SYS_ADD_KEY, uintptr(unsafe.Pointer(&[]byte("user\x00")[0])), uintptr(unsafe.Pointer(&desc[0])),
				uintptr(unsafe.Pointer(&payload[0])), uintptr(len(payload)), uintptr(sessionRing), 0)
			if e != 0 {
				t.Skipf("cannot add a key to the session keyring: %v", e)
			}
			defer unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_INVALIDATE, id, 0)
			p, _ := fencedProbe(t, network, int(id))
			if p.KeyRead == "ok" {
				t.Errorf("the fenced server read a key in airlock's session keyring")
			}
		})
	}
}
