//go:build !unix

package pollstdin

import "os"

// Stdin is os.Stdin where there is no poller for pipes (see pollstdin_unix.go).
func Stdin() *os.File { return os.Stdin }
