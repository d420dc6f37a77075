//go:build !unix && !windows

package config

import (
	"errors"
	"os"
)

// readPolicyFile refuses a policy file that exists: this system's owners cannot be
// checked, and a policy that cannot be trusted is never read.
func readPolicyFile(path string) ([]byte, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	return nil, &PolicyError{Path: path, Why: "cannot be checked for its owner on this system", Err: errors.ErrUnsupported}
}

// systemProgramData is Windows' ProgramData folder; none here.
func systemProgramData() string { return "" }
