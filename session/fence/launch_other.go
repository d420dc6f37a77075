//go:build !linux && !darwin

package fence

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"time"
)

// Supported says this platform can fence a server.
const Supported = false

// Main is the launcher, which runs only on Linux.
func Main(string) int {
	os.Stderr.WriteString("airlock: the sandbox launcher runs only on Linux\n")
	return 125
}

// ErrNamespaces is never returned here.
var ErrNamespaces = errors.New("a network namespace could not be made")

// Launch is never made here.
type Launch struct{ Own []string }

// Wrap refuses: there is no fence on this platform, and none is pretended.
func Wrap(*exec.Cmd, Sandbox, string) (*Launch, error) {
	return nil, fmt.Errorf("sandbox requested but airlock cannot fence a server on %s: remove the sandbox table, or set required = false to run it unfenced", runtime.GOOS)
}

func (l *Launch) StartFailed(_ *exec.Cmd, err error) error { return err }
func (l *Launch) Started()                                 {}
func (l *Launch) Wait(time.Time) (Report, error)           { return Report{}, errors.New("no fence") }
func (l *Launch) Cleanup()                                 {}
func (l *Launch) Exited()                                  {}
