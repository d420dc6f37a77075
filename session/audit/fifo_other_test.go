//go:build !unix

package audit_test

import "errors"

// mkfifo fails where the system has no named pipes in the file system.
func mkfifo(string) error { return errors.New("no named pipes on this system") }
