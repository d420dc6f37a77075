package audit

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// syncFile puts what was written to f on disk, with its size: fdatasync, which
// leaves out only the times, not what reading the records back needs.
func syncFile(f *os.File) error {
	return onFd(f, "fdatasync", unix.Fdatasync)
}

// onFd calls op with f's descriptor, again when a signal interrupted it; an error
// names the call (name) and the file.
func onFd(f *os.File, name string, op func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if opErr = op(int(fd)); opErr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if opErr != nil {
		return &os.PathError{Op: name, Path: f.Name(), Err: opErr}
	}
	return nil
}

// fileStat is what load asks of a log's file: its size and which file it is.
type fileStat struct {
	size     int64
	dev, ino uint64
}

func (s fileStat) same(o fileStat) bool { return s.dev == o.dev && s.ino == o.ino }

// statxMask asks for the size and the file's identity and not its times. Asking
// a file's times (fstat and lstat do) marks them read, and from Linux 6.13 the
// next write then stamps the file with a fine-grained time, which dirties the
// inode, so the commit's sync writes it too: about 60 µs more a synced append,
// measured on ext4. Left unasked, writes within a clock tick leave the times alone.
const statxMask = unix.STATX_TYPE | unix.STATX_SIZE | unix.STATX_INO

// statFile is f's fileStat, its times not asked (statxMask); f.Stat where statx
// is not there.
func statFile(f *os.File) (fileStat, error) {
	var stx unix.Statx_t
	err := onFd(f, "statx", func(fd int) error { return unix.Statx(fd, "", unix.AT_EMPTY_PATH, statxMask, &stx) })
	if errors.Is(err, unix.ENOSYS) {
		return statFileInfo(f.Stat())
	}
	if err != nil {
		return fileStat{}, err
	}
	return fromStatx(&stx), nil
}

// statPath is the fileStat of what is at path (a link itself, not followed),
// its times not asked; an error matching os.ErrNotExist when nothing is there.
func statPath(path string) (fileStat, error) {
	var stx unix.Statx_t
	for {
		err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, statxMask, &stx)
		switch err {
		case nil:
			return fromStatx(&stx), nil
		case unix.EINTR:
			continue
		case unix.ENOSYS:
			return statFileInfo(os.Lstat(path))
		}
		return fileStat{}, &os.PathError{Op: "statx", Path: path, Err: err}
	}
}

func fromStatx(stx *unix.Statx_t) fileStat {
	return fileStat{size: int64(stx.Size), dev: unix.Mkdev(stx.Dev_major, stx.Dev_minor), ino: stx.Ino}
}

func statFileInfo(fi os.FileInfo, err error) (fileStat, error) {
	if err != nil {
		return fileStat{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStat{}, errors.New("no device and inode number")
	}
	return fileStat{size: fi.Size(), dev: uint64(st.Dev), ino: st.Ino}, nil
}
