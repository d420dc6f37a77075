//go:build !unix

package statefile

import "io"

// HoldWritten is, where a file open here may block another process's rename over
// it (Windows), the file's stamp with nothing held: it never vouches, and the file
// is read again at the next look.
func HoldWritten(path string) (Stamp, io.Closer, error) {
	s, err := StampPath(path)
	return s, noHold{}, err
}

type noHold struct{}

func (noHold) Close() error { return nil }
