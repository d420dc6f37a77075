package demo

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/airlock-mcp/airlock/session/statefile"
)

// lockName is the lock a running `airlock demo` holds in its state folder.
const lockName = ".running"

// ClaimState prepares dir, the folder `airlock demo` keeps all its state in
// (gateway token, audit log, exported changes), for a new demo run: it takes a lock
// that lasts as long as the demo runs and empties the folder, so every demo starts
// from a clean slate and leaves nothing of an earlier one behind. When another demo
// holds the lock (two demos at once), nothing is removed and cleared is false: the
// second demo shares the first one's files rather than pulling them from under it.
// release ends the claim. dir must be a folder of airlock's own: everything in it is
// removed.
func ClaimState(dir string) (release func(), cleared bool, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("creating the demo folder: %w", err)
	}
	lf, err := statefile.OpenLock(filepath.Join(dir, lockName))
	if err != nil {
		return nil, false, fmt.Errorf("locking the demo folder: %w", err)
	}
	got, err := statefile.TryLock(lf)
	if err != nil {
		lf.Close()
		return nil, false, fmt.Errorf("locking the demo folder: %w", err)
	}
	release = func() { _ = lf.Close() } // closing the file ends the lock
	if !got {
		return release, false, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		release()
		return nil, false, fmt.Errorf("clearing the demo folder: %w", err)
	}
	for _, e := range entries {
		if e.Name() == lockName {
			continue
		}
		// RemoveAll removes a symbolic link itself, never what it points to.
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			release()
			return nil, false, fmt.Errorf("clearing the demo folder: %w", err)
		}
	}
	return release, true, nil
}
