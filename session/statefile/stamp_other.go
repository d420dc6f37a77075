//go:build !linux && !openbsd && !dragonfly && !solaris && !illumos && !darwin && !freebsd && !netbsd

package statefile

import "io/fs"

// changeTimeAndOwner has no change time or owner to give here (Windows' stat has
// neither): identity, size, mode and the modification time are compared, and the
// settle rule still applies to the modification time.
func changeTimeAndOwner(fs.FileInfo) (ctime, owner int64) { return 0, -1 }
