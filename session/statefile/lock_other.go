//go:build !unix && !windows

package statefile

import "os"

// Lock is a no-op where the platform has no file lock airlock uses: one airlock
// process per state dir is then the rule (see docs/secrets-and-state.md).
func Lock(*os.File) error { return nil }

func Unlock(*os.File) error { return nil }

func TryLock(*os.File) (bool, error) { return true, nil }

func LockShared(*os.File) error { return nil }
