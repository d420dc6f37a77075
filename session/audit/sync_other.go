//go:build !linux

package audit

import "os"

// syncFile puts what was written to f on disk: f.Sync, which on darwin is
// F_FULLFSYNC, the only sync there that reaches the disk itself.
func syncFile(f *os.File) error { return f.Sync() }

// fileStat is what load asks of a log's file: its size and which file it is.
type fileStat struct {
	size int64
	fi   os.FileInfo
}

func (s fileStat) same(o fileStat) bool { return os.SameFile(s.fi, o.fi) }

// statFile is f's fileStat.
func statFile(f *os.File) (fileStat, error) { return statFileInfo(f.Stat()) }

// statPath is the fileStat of what is at path (a link itself, not followed).
func statPath(path string) (fileStat, error) { return statFileInfo(os.Lstat(path)) }

func statFileInfo(fi os.FileInfo, err error) (fileStat, error) {
	if err != nil {
		return fileStat{}, err
	}
	return fileStat{size: fi.Size(), fi: fi}, nil
}
