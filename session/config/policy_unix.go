//go:build unix

package config

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// readPolicyFile opens the policy file without following a link at its name, checks
// the folder it is in and the open file itself (fstat: what is checked is what is
// read), and reads it.
func readPolicyFile(path string) ([]byte, error) {
	return readPolicyFileAs(path, os.Getuid())
}

func readPolicyFileAs(path string, me int) ([]byte, error) {
	dir := filepath.Dir(path)
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if st, err := statOf(d); err != nil {
		return nil, &PolicyError{Path: path, Why: "cannot be checked: " + err.Error(), Err: err}
	} else if why := policyStatProblem(st, me); why != "" {
		return nil, &PolicyError{Path: path, Why: dirProblem(dir, why)}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return nil, &PolicyError{Path: path, Why: "is a symbolic link: airlock reads a policy only from the file itself"}
		}
		return nil, err
	}
	defer f.Close()
	st, err := statOf(f)
	if err != nil {
		return nil, &PolicyError{Path: path, Why: "cannot be checked: " + err.Error(), Err: err}
	}
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		return nil, &PolicyError{Path: path, Why: "is not a regular file (" + fi.Mode().Type().String() + ")"}
	}
	if why := policyStatProblem(st, me); why != "" {
		return nil, &PolicyError{Path: path, Why: why}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPolicyBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPolicyBytes {
		return nil, &PolicyError{Path: path, Why: "is larger than 4 MiB"}
	}
	return data, nil
}

// statOf is the owner check's facts of an open file, from fstat.
func statOf(f *os.File) (policyStat, error) {
	fi, err := f.Stat()
	if err != nil {
		return policyStat{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return policyStat{}, errors.New("cannot tell who owns it")
	}
	return policyStat{uid: st.Uid, perm: fi.Mode().Perm()}, nil
}

// systemProgramData is Windows' ProgramData folder; none here.
func systemProgramData() string { return "" }
