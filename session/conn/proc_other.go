//go:build unix && !linux

package conn

import "syscall"

func setPdeathsig(*syscall.SysProcAttr) {}
