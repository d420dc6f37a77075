//go:build unix

package session

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

// killGroup signals every process in the child's process group.
func killGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, sig)
}
