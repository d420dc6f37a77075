//go:build unix

package statefile

import (
	"io"
	"os"
)

// HoldWritten is the stamp of the file at path, which this process has just
// written atomically under the lock every writer of the file takes, and the file
// held open. While it is held its inode cannot be freed, so no other file put at the
// path can be given its number (ext4 gives a freed number to the next file almost
// every time): a stamp still equal names this very file, and a change made to it
// in place moves its times. So it vouches at once, without settling, which spares a
// process reading its own write again at every look (20 servers listing at once
// would each read the pins file). Close the returned closer once the stamp is no
// longer kept.
func HoldWritten(path string) (Stamp, io.Closer, error) {
	at := clock()
	f, err := openNoFollow(path, os.O_RDONLY)
	if err != nil {
		return Stamp{}, nil, err
	}
	// Checked as every read is: a FIFO, another user's file or one others may read,
	// put in its place since the write, is not vouched for as what was written.
	if err := check(f, path); err != nil {
		f.Close()
		return Stamp{}, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return Stamp{}, nil, err
	}
	s := StampOf(fi, at)
	s.settled = s.ctime != 0
	return s, f, nil
}
