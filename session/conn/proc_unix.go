//go:build unix

package conn

import (
	"os/exec"
	"syscall"
)

// procAttr puts the child in its own process group, so the group can be signalled as
// one, and (on Linux) asks the kernel to kill it if airlock itself dies.
func procAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(a)
	return a
}

// procTree is the set of processes a stdio server started: on Unix its process
// group, which procAttr set up before the child ran.
type procTree struct{}

// attachTree is called right after Start; on Unix there is nothing left to do.
func attachTree(*exec.Cmd) (procTree, error) { return procTree{}, nil }

// kill signals every process in the child's process group.
func (procTree) kill(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, sig)
}

// release frees what the tree holds, once the child is reaped.
func (procTree) release() {}
