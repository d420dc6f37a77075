//go:build !linux

package audit

import (
	"errors"
	"os"
)

// preallocate does nothing here: only Linux preallocates the log's blocks.
func preallocate(*os.File, int64, int64) error {
	return errors.ErrUnsupported
}

// syncFile puts what was written to f on disk: f.Sync, which on darwin is
// F_FULLFSYNC, the only sync there that reaches the disk itself.
func syncFile(f *os.File) error { return f.Sync() }
