//go:build linux || openbsd || dragonfly || solaris || illumos

package statefile

import (
	"io/fs"
	"syscall"
)

func changeTimeAndOwner(fi fs.FileInfo) (ctime, owner int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Ctim.Sec)*1e9 + int64(st.Ctim.Nsec), int64(st.Uid)
	}
	return 0, -1
}
