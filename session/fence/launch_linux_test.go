package fence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The test binary doubles as the launcher, and as an unprivileged airlock that
// starts a fenced command (AIRLOCK_FENCE_TEST_START=1).
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == LauncherArg {
		os.Exit(Main(os.Args[2]))
	}
	if os.Getenv("AIRLOCK_FENCE_TEST_START") == "1" {
		os.Exit(startFencedForTest())
	}
	os.Exit(m.Run())
}

// startFencedForTest starts `sh -c "cat /proc/$$/uid_map"` (the shell is the
// launcher's pid, so its /proc entry is granted) fenced with network = "none" and
// prints the report and what it printed as JSON.
func startFencedForTest() int {
	if os.Getenv("AIRLOCK_FENCE_TEST_REMOVE_SELF") == "1" {
		// An upgrade that replaces airlock's executable while it runs.
		self, _ := os.Executable()
		if err := os.Remove(self); err != nil {
			fmt.Println(err)
			return 1
		}
	}
	cmd := exec.Command("/bin/sh", "-c", "cat /proc/$$/uid_map; echo end")
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	l, err := Wrap(cmd, Sandbox{Network: "none", Required: true}, "")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Println(l.StartFailed(cmd, err))
		return 1
	}
	l.Started()
	rep, err := l.Wait(time.Now().Add(20 * time.Second))
	werr := cmd.Wait()
	l.Cleanup()
	b, _ := json.Marshal(map[string]any{"report": rep, "err": fmt.Sprint(err), "wait": fmt.Sprint(werr), "out": out.String()})
	fmt.Println(string(b))
	return 0
}

// As an unprivileged user the launcher is born in a user namespace holding the
// network namespace, with the user's own id mapped; the report says so.
func TestUnprivilegedLauncherUsesUserNamespace(t *testing.T) {
	if v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION); e != 0 || v < minABI {
		t.Skipf("this kernel cannot fence: Landlock ABI %d (%v)", int(v), e)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the launcher as another, unprivileged user")
	}
	cmd := testBinaryCopy(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("unprivileged start: %v: %s", err, out)
	}
	var got struct {
		Report         Report
		Err, Wait, Out string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		if strings.Contains(string(out), ErrNamespaces.Error()) {
			t.Skipf("unprivileged user namespaces are refused here: %s", out)
		}
		t.Fatalf("%v: %s", err, out)
	}
	r := got.Report
	t.Logf("report %+v; output %q", r, got.Out)
	if !r.Applied || !r.NetNS || !r.UserNS || r.ABI < minABI || got.Err != "<nil>" || got.Wait != "<nil>" {
		t.Fatalf("unprivileged fence: %+v (err %s, wait %s)", r, got.Err, got.Wait)
	}
	if !strings.Contains(got.Out, "65534      65534          1") {
		t.Errorf("uid_map = %q, want the user's own id mapped, one id", got.Out)
	}
}

// testBinaryCopy is a command running a copy of the test binary, in a folder any
// user can reach, as an airlock that starts a fenced command.
func testBinaryCopy(t *testing.T) *exec.Cmd {
	dir, err := os.MkdirTemp("", "airlock-fence-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	bin := filepath.Join(dir, "fence.test")
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(dst, src)
	src.Close()
	dst.Close()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Dir = dir
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(tmp, 0o777)
	cmd.Env = []string{"AIRLOCK_FENCE_TEST_START=1", "PATH=/usr/bin:/bin", "TMPDIR=" + tmp}
	return cmd
}

// The launcher is airlock's running executable, not the file at its path: an
// upgrade that replaced (here removed) the file while airlock runs still fences.
func TestLauncherIsTheRunningExecutable(t *testing.T) {
	if v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION); e != 0 || v < minABI {
		t.Skipf("this kernel cannot fence: Landlock ABI %d (%v)", int(v), e)
	}
	cmd := testBinaryCopy(t)
	cmd.Env = append(cmd.Env, "AIRLOCK_FENCE_TEST_REMOVE_SELF=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("start: %v: %s", err, out)
	}
	var got struct {
		Report         Report
		Err, Wait, Out string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !got.Report.Applied || got.Err != "<nil>" || got.Wait != "<nil>" || !strings.Contains(got.Out, "end") {
		t.Fatalf("fenced start after the executable was replaced: %s", out)
	}
}

// A launcher that cannot apply the fence reports why and exits at once. Its exit
// is noticed (and the process reaped, and Exited called, as airlock's wait for
// the server does) before, or while, the report is read: the report must still
// be read, not lost to the pipe closed under the reader ("the sandbox launcher
// sent no report"), which under load made a refused fence's reason vanish.
func TestWait_ReportOutlivesTheLaunchersExit(t *testing.T) {
	if v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION); e != 0 || v < minABI {
		t.Skipf("this kernel cannot fence: Landlock ABI %d (%v)", int(v), e)
	}
	gone := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(gone, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/true")
	l, err := Wrap(cmd, Sandbox{Read: []string{gone}, Network: "none", Required: true}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(l.StartFailed(cmd, err))
	}
	l.Started()
	_ = cmd.Wait() // the launcher has exited: code 126
	l.Exited()
	rep, err := l.Wait(time.Now().Add(20 * time.Second))
	if err != nil || rep.Applied || !strings.Contains(rep.Reason, gone+" cannot be granted") {
		t.Fatalf("Wait after the launcher exited: %+v, %v; want the refusal's reason", rep, err)
	}
	if _, err := os.Stat(l.tmp); err == nil {
		t.Errorf("the server's private folder %s is still there after Exited", l.tmp)
	}
	l.Cleanup() // after Wait: harmless
}
