package fence

import (
	"errors"
	"os"
	"os/exec"
	"time"
)

// Supported says this platform can fence a server.
const Supported = true

// Main is the launcher, which macOS does not use (sandbox-exec is).
func Main(string) int {
	os.Stderr.WriteString("airlock: the sandbox launcher runs only on Linux\n")
	return 125
}

// ErrNamespaces wraps a start that failed because namespaces could not be made
// (never on macOS).
var ErrNamespaces = errors.New("a network namespace could not be made")

// Launch is one fenced start: the private temporary folder given to the server.
type Launch struct {
	tmp string
	// Own is what the command itself is granted to read (OwnPaths).
	Own []string
}

// Wrap turns cmd into sandbox-exec running it under SeatbeltProfile.
func Wrap(cmd *exec.Cmd, sb Sandbox, _ string) (*Launch, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if sb.MemoryBytes > 0 || sb.CPUSeconds > 0 || sb.Processes > 0 {
		return nil, errors.New("sandbox requested but airlock does not apply memory, cpu or process limits on macOS")
	}
	own, err := OwnPaths(cmd.Path, cmd.Env)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "airlock-fence-")
	if err != nil {
		return nil, err
	}
	cmd.Env = fencedEnv(cmd.Env, tmp, sb.Network)
	const sandboxExec = "/usr/bin/sandbox-exec"
	cmd.Args = append([]string{sandboxExec, "-p", SeatbeltProfile(own, tmp, sb), cmd.Path}, cmd.Args[1:]...)
	cmd.Path = sandboxExec
	return &Launch{tmp: tmp, Own: own}, nil
}

// StartFailed cleans up after a failed start.
func (l *Launch) StartFailed(_ *exec.Cmd, err error) error { l.Cleanup(); return err }

// Started does nothing on macOS.
func (l *Launch) Started() {}

// Wait reports the profile: sandbox-exec refuses to run the command when the
// profile cannot be applied, and says so on stderr.
func (l *Launch) Wait(time.Time) (Report, error) {
	return Report{Applied: true, Mechanism: "Seatbelt profile (sandbox-exec)"}, nil
}

// Exited removes the server's private temporary folder once it has ended.
func (l *Launch) Exited() { os.RemoveAll(l.tmp) }

// Cleanup removes the server's private temporary folder.
func (l *Launch) Cleanup() { os.RemoveAll(l.tmp) }
