package statefile

import (
	"io/fs"
	"os"
	"time"
)

// Settle is how long before a stat a file's times must lie for its Stamp to vouch
// for it. A file changed again within the same tick of the clock its times are
// taken from (a jiffy on Linux without fine-grained stamps, 2 s on FAT) can keep
// every time, its size and, when a rename gave it a freed inode number, its
// identity: only a stamp whose times are older than any such tick can tell a
// change from none. A file changed within Settle of a look is read again at every
// look until it settles.
const Settle = 2 * time.Second

// clock is the time a stamp is taken at (tests move it to see a file settle).
var clock = time.Now

// Stamp is a file as a stat saw it: its identity, type and permissions, owner,
// size, and modification and change times. A file that still has the same stamp
// holds the bytes it held then, when the stamp is settled (Unchanged). The change
// time (ctime) is the one no program can set: a rewrite that puts the old
// modification time back (`cp -p`, `touch -r`, a restore) still moves it.
type Stamp struct {
	fi      fs.FileInfo // identity, for os.SameFile (device and inode, or Windows' file index)
	size    int64
	mode    fs.FileMode
	mtime   time.Time
	ctime   int64 // ns since the epoch; 0 where the platform has none
	owner   int64 // -1 where the platform has none
	settled bool
}

// StampOf is fi's stamp, fi being a stat (or lstat) taken at about at: the time
// read just before the stat.
func StampOf(fi fs.FileInfo, at time.Time) Stamp {
	s := Stamp{fi: fi, size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime(), owner: -1}
	// On Windows a stat's identity (volume and file index) is read from the path at
	// the first os.SameFile, not by the stat: compared later, it would be the
	// identity of whatever file is there then. Read it now.
	_ = os.SameFile(fi, fi)
	s.ctime, s.owner = changeTimeAndOwner(fi)
	newest := s.mtime
	if s.ctime != 0 {
		if c := time.Unix(0, s.ctime); c.After(newest) {
			newest = c
		}
	}
	// A time ahead of the clock (a clock stepped back) never settles: read again.
	// Without a change time (Windows) nothing settles: a rewrite that puts the old
	// modification time back, or a change of who may read the file, would move
	// nothing the stamp compares.
	s.settled = s.ctime != 0 && newest.Before(at.Add(-Settle))
	return s
}

// StampPath is the stamp of the file at path, the link itself for a link.
func StampPath(path string) (Stamp, error) {
	at := clock()
	fi, err := os.Lstat(path)
	if err != nil {
		return Stamp{}, err
	}
	return StampOf(fi, at), nil
}

// Size is the file's size at the stamp.
func (s Stamp) Size() int64 { return s.size }

// IsZero reports whether s is the zero Stamp: no file.
func (s Stamp) IsZero() bool { return s.fi == nil }

// Unchanged reports whether o is the same file in the same state as s, as far as a
// stat can tell, and s is settled: only then may what was read of the file at s
// stand for it at o. A zero s (nothing read yet) is never unchanged.
func (s Stamp) Unchanged(o Stamp) bool {
	return s.settled && s.fi != nil && o.fi != nil && os.SameFile(s.fi, o.fi) &&
		s.size == o.size && s.mode == o.mode && s.mtime.Equal(o.mtime) &&
		s.ctime == o.ctime && s.owner == o.owner
}
