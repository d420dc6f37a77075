//go:build !unix

package importer

import (
	"io/fs"
	"os"
)

// openAgentFile opens path for reading; unless follow, a link (or other reparse
// point) at path is refused: it is looked at before the open and the open file
// must be the file looked at, so a link swapped in between is refused too.
func openAgentFile(path string, follow bool) (*os.File, error) {
	if follow {
		return os.Open(path)
	}
	before, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if before.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return nil, errLink
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if after, err := f.Stat(); err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, errLink
	}
	return f, nil
}
