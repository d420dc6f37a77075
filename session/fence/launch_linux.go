package fence

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Supported says this platform can fence a server.
const Supported = true

// Main is the launcher: spec is its JSON argument, the report pipe is descriptor
// 3. It returns only when the server could not be executed (the exit code).
func Main(spec string) int {
	rep := os.NewFile(3, "report")
	var s Spec
	if err := json.Unmarshal([]byte(spec), &s); err != nil || s.Path == "" || len(s.Argv) == 0 {
		fmt.Fprintln(os.Stderr, "airlock: the sandbox launcher was started without a valid spec")
		return 125
	}
	var r Report
	if err := apply(&s, &r); err != nil {
		r.Reason = err.Error()
	} else {
		r.Applied = true
	}
	send(rep, r)
	if !r.Applied && s.Required {
		return 126
	}
	err := unix.Exec(s.Path, s.Argv, os.Environ())
	send(rep, Report{ExecError: fmt.Sprintf("executing %s: %v", s.Path, err)})
	return 127
}

func send(f *os.File, r Report) {
	b, _ := json.Marshal(r)
	_, _ = f.Write(append(b, '\n'))
}

// apply sets up everything s asks for on this thread, in the order that keeps
// each step possible: descriptors (needs /proc), namespaces (checked), limits,
// then no_new_privs and Landlock. It stops at the first part that cannot be
// applied.
func apply(s *Spec, r *Report) error {
	runtime.LockOSThread() // never unlocked: the restricted thread executes the server
	if err := closeInherited(); err != nil {
		return fmt.Errorf("inherited descriptors could not be closed: %v", err)
	}
	r.FDsClosed = true
	if s.Network == "none" {
		net, err := nsInode("net")
		if err != nil {
			return fmt.Errorf("sandbox requested but the network namespace cannot be checked: %v", err)
		}
		if net == s.ParentNetNS {
			return errors.New("sandbox requested but no network namespace could be made (network = \"none\")")
		}
		r.NetNS = true
	}
	if user, err := nsInode("user"); err == nil && user != s.ParentUserNS {
		r.UserNS = true
	}
	if err := limits(s, r); err != nil {
		return err
	}
	// A new, anonymous session keyring: the one inherited holds the keys of
	// whoever started airlock, readable by any process that possesses it.
	if _, _, e := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); e != 0 {
		return fmt.Errorf("sandbox requested but a new session keyring could not be joined: %v", e)
	}
	r.Keyring = true
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("sandbox requested but the capabilities could not be dropped: %v", err)
	}
	r.NoCaps = true
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs could not be set: %v", err)
	}
	r.NoNewPrivs = true
	return landlock(s, r)
}

// closeInherited marks every descriptor above stderr close-on-exec, the report
// pipe included: the server starts with stdin, stdout and stderr only.
func closeInherited() error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
				return err
			}
		}
	}
	return nil
}

func nsInode(kind string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/"+kind, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// limits applies the rlimits asked for. Memory is RLIMIT_DATA, not RLIMIT_AS:
// V8 and the JVM reserve far more address space than they use, and RLIMIT_AS
// stops them from starting.
func limits(s *Spec, r *Report) error {
	set := func(res int, v int64, what string) error {
		if v <= 0 {
			return nil
		}
		lim := unix.Rlimit{Cur: uint64(v), Max: uint64(v)}
		if err := unix.Setrlimit(res, &lim); err != nil {
			return fmt.Errorf("sandbox requested but the %s limit could not be set: %v", what, err)
		}
		r.Limits = append(r.Limits, fmt.Sprintf("%s %d", what, v))
		return nil
	}
	if err := set(unix.RLIMIT_DATA, s.MemoryBytes, "memory (RLIMIT_DATA, bytes)"); err != nil {
		return err
	}
	if err := set(unix.RLIMIT_CPU, s.CPUSeconds, "cpu (RLIMIT_CPU, seconds)"); err != nil {
		return err
	}
	return set(unix.RLIMIT_NPROC, s.Processes, "processes (RLIMIT_NPROC, per user)")
}

// dropCapabilities leaves the thread no capability and, for a uid 0, an empty
// bounding set, so executing the server gains none: root in airlock's user
// namespace could otherwise make device nodes, open raw sockets, change the host
// name or raise its limits. It fails when any capability remains.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing the ambient set: %v", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	const setpcap = 1 << unix.CAP_SETPCAP
	if data[0].Effective&setpcap != 0 {
		for c := 0; c < 64; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("dropping capability %d from the bounding set: %v", c, err)
			}
		}
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return err
	}
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	for _, d := range data {
		if d.Effective|d.Permitted|d.Inheritable != 0 {
			return errors.New("capabilities remain after dropping them")
		}
	}
	if os.Geteuid() == 0 || os.Getuid() == 0 {
		// Executing a program as uid 0 gives it the bounding set.
		for c := 0; c < 64; c++ {
			if in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err == nil && in != 0 {
				return fmt.Errorf("capability %d remains in the bounding set of a uid 0 server", c)
			}
		}
	}
	return nil
}

// Landlock access rights by ABI version.
const (
	accessResolveUnix = 1 << 16 // ABI 9: connecting to pathname unix sockets
	readRights        = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	fileRights        = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	// neverGranted are never given beneath a writable folder: a device node made
	// there (a terminal, /dev/kmsg) or an ioctl on one is a way out of the fence.
	neverGranted = unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// ruleAccess is what rule grants out of the handled rights fs: reading, or every
// right but making devices; ioctl on a device only for SystemWrite's devices.
func ruleAccess(rule Rule, fs uint64) uint64 {
	if !rule.Write {
		return readRights & fs
	}
	access := fs &^ neverGranted
	if slices.Contains(SystemWrite, rule.Path) {
		access |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV & fs
	}
	return access
}

// minABI is the oldest Landlock ABI that covers every way to change a file: ABI 1
// and 2 do not handle truncate(2), so a fenced server could empty any file the
// user owns.
const minABI = 3

func handledFS(abi int) uint64 {
	switch {
	case abi >= 9:
		return 1<<17 - 1
	case abi >= 5:
		return 1<<16 - 1
	default:
		return 1<<15 - 1 // ABI 3 and 4
	}
}

// landlock restricts this thread (and so the server it executes) to s.Rules,
// and with network = "none" denies TCP connect and bind where the ABI has it.
func landlock(s *Spec, r *Report) error {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return fmt.Errorf("sandbox requested but Landlock is not available: kernel %s (%v)", kernel(), e)
	}
	abi := int(v)
	if abi < minABI {
		return fmt.Errorf("sandbox requested but Landlock ABI %d on kernel %s does not cover truncating files (ABI %d, Linux 6.2, does)", abi, kernel(), minABI)
	}
	fs := handledFS(abi)
	attr := unix.LandlockRulesetAttr{Access_fs: fs}
	size := unsafe.Sizeof(attr.Access_fs)
	if abi >= 4 {
		size += unsafe.Sizeof(attr.Access_net)
		if s.Network == "none" {
			attr.Access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		}
	}
	if abi >= 6 {
		size += unsafe.Sizeof(attr.Scoped)
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return fmt.Errorf("sandbox requested but a Landlock ruleset could not be made: %v", e)
	}
	defer unix.Close(int(fd))
	n := 0
	for _, rule := range s.Rules {
		added, err := addRule(int(fd), rule.Path, ruleAccess(rule, fs))
		if err != nil {
			if rule.Optional {
				continue
			}
			return fmt.Errorf("sandbox requested but %s cannot be granted: %v", rule.Path, err)
		}
		if added {
			n++
		}
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return fmt.Errorf("sandbox requested but Landlock could not be enforced: %v", e)
	}
	r.ABI, r.Rules, r.TCP, r.Scoped = abi, n, attr.Access_net != 0, attr.Scoped != 0
	return nil
}

// addRule grants access beneath path (a file gets only the rights a file has).
func addRule(rulesetFD int, path string, access uint64) (bool, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0); e != 0 {
		return false, e
	}
	return true, nil
}

func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// Launch is one fenced start: airlock's end of the report pipe and the private
// temporary folder given to the server.
type Launch struct {
	report, child *os.File
	tmp           string
	// Own is what the command itself is granted to read (OwnPaths).
	Own []string
}

// ErrNamespaces wraps a start that failed because the namespaces could not be made.
var ErrNamespaces = errors.New("a network namespace could not be made")

// Wrap turns cmd, built to start the server itself (Path, Args, Env, Dir), into
// the start of the launcher that fences it. noNamespace, when not "", says the
// network namespace is not to be made (a retry of a not-required fence after
// ErrNamespaces) and why: the launcher then reports the fence unapplied.
func Wrap(cmd *exec.Cmd, sb Sandbox, noNamespace string) (*Launch, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	exe := cmd.Path
	if !strings.HasPrefix(exe, "/") {
		dir := cmd.Dir
		if dir == "" {
			dir, _ = os.Getwd()
		}
		exe = dir + "/" + exe
	}
	own, err := OwnPaths(exe, cmd.Env)
	if err != nil {
		return nil, err
	}
	// The launcher is the executable airlock runs from, not the file at its path:
	// an upgrade may have replaced that file since airlock started.
	const self = "/proc/self/exe"
	if _, err := os.Stat(self); err != nil {
		return nil, fmt.Errorf("finding airlock's own executable for the sandbox launcher: %w", err)
	}
	argv0 := "airlock"
	if p, err := os.Executable(); err == nil {
		argv0 = p
	}
	tmp, err := os.MkdirTemp("", "airlock-fence-")
	if err != nil {
		return nil, fmt.Errorf("making the fenced server's temporary folder: %w", err)
	}
	cmd.Env = fencedEnv(cmd.Env, tmp, sb.Network)
	spec := Spec{Path: exe, Argv: cmd.Args, Rules: Rules(own, tmp, sb), Network: sb.Network, Required: sb.Required,
		MemoryBytes: sb.MemoryBytes, CPUSeconds: sb.CPUSeconds, Processes: sb.Processes}
	spec.ParentNetNS, _ = nsInode("net")
	spec.ParentUserNS, _ = nsInode("user")
	b, err := json.Marshal(spec)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	cmd.Path, cmd.Args = self, []string{argv0, LauncherArg, string(b)}
	cmd.ExtraFiles = []*os.File{w}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// Its own session: no controlling terminal to inject keystrokes into (TIOCSTI)
	// and a process group of its own (setsid makes one), so stopping still reaches
	// the whole group.
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Setsid = false, true
	// A user namespace (with its own host name and IPC) where one is needed: with
	// network = "none", and always for a root airlock, whose capabilities the
	// launcher then drops where they do not reach the host.
	if noNamespace == "" && (sb.Network == "none" || os.Geteuid() == 0) {
		flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC)
		if sb.Network == "none" {
			flags |= syscall.CLONE_NEWNET
		}
		cmd.SysProcAttr.Cloneflags = flags
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
	}
	return &Launch{report: r, child: w, tmp: tmp, Own: own}, nil
}

// StartFailed turns the error of a failed cmd.Start into ErrNamespaces when the
// namespaces were what the kernel refused.
func (l *Launch) StartFailed(cmd *exec.Cmd, err error) error {
	l.Cleanup()
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Cloneflags != 0 &&
		(errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS)) {
		return fmt.Errorf("%w: %v", ErrNamespaces, err)
	}
	return err
}

// Started closes airlock's copy of the launcher's end of the pipe.
func (l *Launch) Started() { l.child.Close() }

// Wait reads the launcher's report until the launcher executes the server (the
// pipe closes) or deadline passes: a missing or partial report is an error.
func (l *Launch) Wait(deadline time.Time) (Report, error) {
	defer l.report.Close()
	_ = l.report.SetReadDeadline(deadline)
	var buf []byte
	chunk := make([]byte, 4096)
	for len(buf) < 64<<10 {
		n, err := l.report.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return Report{}, errors.New("the sandbox launcher did not report in time")
			}
			break
		}
	}
	return ReadReport(buf)
}

// Exited is what the launched process's end asks: its private temporary folder
// removed. The report pipe stays open: the launcher writes its report and exits at
// once when the fence cannot be applied, so its end may be noticed before Wait has
// read the report, which Wait then still reads (and closes).
func (l *Launch) Exited() { os.RemoveAll(l.tmp) }

// Cleanup removes the server's private temporary folder and closes both ends of
// the report pipe: for a launch that is given up before Wait, or after it.
func (l *Launch) Cleanup() {
	if l.report != nil {
		l.report.Close()
	}
	l.child.Close()
	os.RemoveAll(l.tmp)
}
