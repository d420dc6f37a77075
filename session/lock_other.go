//go:build !unix && !windows

package session

import "os"

// lockFile is a no-op where the platform has no file lock airlock uses: one airlock
// process per state dir is then the rule (see docs/secrets-and-state.md).
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }

func tryLockFile(*os.File) (bool, error) { return true, nil }
