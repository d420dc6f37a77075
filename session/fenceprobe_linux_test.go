package session_test

import "syscall"

func ptraceAttach(pid int) error {
	if err := syscall.PtraceAttach(pid); err != nil {
		return err
	}
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(pid, &ws, 0, nil)
	return syscall.PtraceDetach(pid)
}

func signalZero(pid int) error { return syscall.Kill(pid, 0) }
