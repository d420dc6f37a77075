// Package statefile reads and writes the private files airlock trusts (the gateway
// token, pins, OAuth tokens, the audit log): opened without following a symbolic
// link, refused unless they belong to the user and no one else may read or write
// them, and written atomically with owner-only access.
//
// "No one else" means, on Unix, owned by the current user with no group or other
// permission bits; on Windows, owned by the current user (or SYSTEM or
// Administrators, who can read every file anyway) with a DACL that allows no one but
// the user, SYSTEM and Administrators. Files are created private from the start
// (mode 0600; on Windows a protected DACL granting only the user), so no other
// process can open them between creation and a later permission change.
package statefile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Problem is what is wrong with a file airlock refuses to trust.
type Problem int

// The problems.
const (
	Symlink    Problem = iota + 1 // a symbolic link (or, on Windows, any reparse point)
	NotRegular                    // a directory, device, FIFO or socket
	OtherOwner                    // owned by another user
	Shared                        // readable or writable by others
)

// Error is a refused file. Its message is a sentence that says what is wrong and
// what to do.
type Error struct {
	Path    string
	Problem Problem
	// Detail says who owns it or who else may use it ("mode 0640", "uid 65534").
	Detail string
	// Also is extra advice a caller adds (Advise).
	Also string
}

func (e *Error) Error() string {
	s := e.Reason()
	switch e.Problem {
	case Symlink:
		s += "; airlock refuses to follow it: move it aside"
	case NotRegular, OtherOwner:
		s += ": move it aside"
	case Shared:
		s += "; airlock keeps it private: " + privateFix(e.Path)
	}
	if e.Also != "" {
		s += " " + e.Also
	}
	return s
}

// Reason says what is wrong, without what to do ("PATH is a symbolic link").
func (e *Error) Reason() string {
	switch e.Problem {
	case Symlink:
		return e.Path + " is a symbolic link"
	case NotRegular:
		return fmt.Sprintf("%s is not a regular file (%s)", e.Path, e.Detail)
	case OtherOwner:
		return fmt.Sprintf("%s belongs to another user (%s); airlock only trusts your own files", e.Path, e.Detail)
	case Shared:
		return fmt.Sprintf("%s can be read or written by others (%s)", e.Path, e.Detail)
	}
	return e.Path + " is refused"
}

// Advise adds advice (a clause starting with "or …") to err when it is an *Error,
// and returns err.
func Advise(err error, also string) error {
	var e *Error
	if errors.As(err, &e) {
		e.Also = also
	}
	return err
}

// Refused reports whether err is a refused file (as opposed to a missing or
// unreadable one).
func Refused(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// ReadFile reads a private file. A missing file is an error matching
// fs.ErrNotExist; a file airlock refuses is an *Error.
func ReadFile(path string) ([]byte, error) {
	f, err := open(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Open opens a private file for reading, checked as ReadFile does.
func Open(path string) (*os.File, error) { return open(path, os.O_RDONLY) }

// OpenWrite opens the private file at path for reading and writing at any offset,
// creating it (and its folder, 0700) owner-only when it does not exist.
func OpenWrite(path string) (*os.File, error) { return openCreate(path, os.O_RDWR) }

// OpenLock opens the lock file at path for reading and writing, creating it
// owner-only when missing, with the checks of every private file: a link in its
// place is refused, never followed or created through.
func OpenLock(path string) (*os.File, error) { return openCreate(path, os.O_RDWR) }

func openCreate(path string, flag int) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := createPrivate(path)
	if err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return open(path, flag)
}

// open opens path without following a link and checks it.
func open(path string, flag int) (*os.File, error) {
	f, err := openNoFollow(path, flag)
	if err != nil {
		return nil, err
	}
	if err := check(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// WriteFile writes data to path atomically: into a new owner-only file in the same
// folder, synced, then renamed over path, so a reader sees the old or the new
// content, never a torn one. A link at path is replaced, never followed. Missing
// folders are created 0700.
func WriteFile(path string, data []byte) error { return write(path, data, true) }

// WriteFileNoSync is WriteFile without the fsync, for files that are rewritten often
// and may be lost in a crash (the audit log's head).
func WriteFileNoSync(path string, data []byte) error { return write(path, data, false) }

func write(path string, data []byte, sync bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	var f *os.File
	var tmp string
	for range 10000 {
		var r [8]byte
		_, _ = rand.Read(r[:])
		tmp = filepath.Join(dir, "."+filepath.Base(path)+".tmp"+hex.EncodeToString(r[:]))
		var err error
		f, err = createPrivate(tmp)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if f == nil {
		return fmt.Errorf("writing %s: no free temporary name", path)
	}
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
