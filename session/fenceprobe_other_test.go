//go:build !linux

package session_test

import "errors"

func ptraceAttach(int) error { return errors.New("ptrace is only probed on Linux") }

func signalZero(int) error { return errors.New("signals are only probed on Linux") }
