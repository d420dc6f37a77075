//go:build unix && !linux

package session

import "syscall"

func setPdeathsig(*syscall.SysProcAttr) {}
